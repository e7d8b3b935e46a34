/* The SPANK shims' shared part (shim.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include "spank/shim.h"

#include <dlfcn.h>
#include <errno.h>
#include <unistd.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <slurm/slurm_version.h>

/* The implementation beside the shim: the directory of the file Slurm loaded this code from. */
static int impl_path(const struct acme_impl *impl, char *out, size_t size) {
    Dl_info info;
    const char *self = NULL;
    if (dladdr((void *)&impl_path, &info) && info.dli_fname) self = info.dli_fname;
    const char *slash = self ? strrchr(self, '/') : NULL;
    int n = slash ? snprintf(out, size, "%.*s/%s", (int)(slash - self), self, impl->file)
                  : snprintf(out, size, "%s", impl->file);
    return n > 0 && (size_t)n < size;
}

static void *impl_handle(struct acme_impl *impl, const char *without) {
    if (impl->handle || impl->tried) return impl->handle;
    impl->tried = 1;
    char path[PATH_MAX];
    if (!impl_path(impl, path, sizeof path)) {
        slurm_error("%s: cannot name the path of %s; %s", impl->plugin, impl->file, without);
        return NULL;
    }
    /* RTLD_LOCAL: its symbols stay its own; the spank_* functions it calls are the process's. */
    impl->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!impl->handle) {
        const char *why = dlerror();
        slurm_error("%s: cannot load %s: %s; %s", impl->plugin, path, why ? why : "unknown error", without);
    }
    return impl->handle;
}

void *acme_impl_sym(struct acme_impl *impl, const char *name, const char *without) {
    void *handle = impl_handle(impl, without);
    if (!handle) return NULL;
    void *sym = dlsym(handle, name);
    if (!sym) slurm_error("%s: %s has no %s (another build's?); %s", impl->plugin, impl->file, name, without);
    return sym;
}

int acme_impl_present(const struct acme_impl *impl, const char *without) {
    char path[PATH_MAX];
    if (!impl_path(impl, path, sizeof path)) {
        slurm_error("%s: cannot name the path of %s; %s", impl->plugin, impl->file, without);
        return 0;
    }
    if (access(path, R_OK) == 0) return 1;
    slurm_error("%s: cannot load %s: %s; %s", impl->plugin, path, strerror(errno), without);
    return 0;
}

int acme_impl_loaded(const struct acme_impl *impl) { return impl->handle != NULL; }

void acme_log_build_once(const char *plugin, int *logged, int options_parsed) {
    const spank_context_t ctx = spank_context();
    const int user_terminal = ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR;
    if ((user_terminal && !options_parsed) || *logged) return;
    *logged = 1;
    /* Slurm's own spelling, "22.05.8" (common/util/version.hpp). */
    char slurm[32];
#ifdef SLURM_VERSION_STRING
    snprintf(slurm, sizeof slurm, "%s", SLURM_VERSION_STRING);
#else
    snprintf(slurm, sizeof slurm, "%d.%02d.%d", (int)SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER),
             (int)SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER), (int)SLURM_VERSION_MICRO(SLURM_VERSION_NUMBER));
#endif
    if (user_terminal)
        slurm_verbose("%s: acme-slurm %s built against Slurm %s", plugin, PACKAGE_VERSION, slurm);
    else
        slurm_info("%s: acme-slurm %s built against Slurm %s", plugin, PACKAGE_VERSION, slurm);
}

int acme_plain_node_name(const char *node) { return node && node[0] && !strchr(node, '/'); }
