/* What both SPANK shims share (plain C, libc only). gputrace.so and faultguard.so, the files
   plugstack.conf names, are these shims: Slurm loads them into srun, sbatch, salloc, every
   slurmstepd and every `slurmstepd spank prolog|epilog`, so they link nothing but libc (a C++
   plugin's libstdc++ and libfmt cost each of those processes milliseconds to load and relocate,
   #41). Each shim does the few things every job needs itself and loads its C++ implementation
   (gputrace_impl.so, faultguard_impl.so, in the shim's own directory) only in the processes of
   a job that needs it: an option given, a GPU job's prolog, the epilog. A missing or broken
   implementation is one logged line; the job runs (plugins never hurt jobs). */
#ifndef ACME_SPANK_SHIM_H
#define ACME_SPANK_SHIM_H

#include "spank/shim_text.h"

#define ACME_SHIM_EXPORT __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

/* Inside extern "C": spank.h declares the slurm_spank_* callbacks outside one. */
#include <slurm/spank.h>

/* One implementation library, loaded at most once per process. */
struct acme_impl {
    const char *plugin; /* "gputrace": the log lines' prefix */
    const char *file;   /* "gputrace_impl.so": looked for in the shim's own directory */
    void *handle;
    int tried;
};

/* The implementation's entry point `name`; NULL after one logged line (naming what the job goes
   without: `without`) when the library or the symbol cannot be had. */
void *acme_impl_sym(struct acme_impl *impl, const char *name, const char *without);
/* Whether the implementation is there to be loaded (one access(2), no load); 0 after one logged
   line like acme_impl_sym's when it is not. For work started here that a later process's
   implementation must finish (gputrace's sampler, which only its epilog stops). */
int acme_impl_present(const struct acme_impl *impl, const char *without);
/* Whether the implementation is loaded in this process (an earlier callback needed it). */
int acme_impl_loaded(const struct acme_impl *impl);

/* The first line a plugin logs in a process (spank_abi.hpp's log_build_once): slurmd's and
   slurmstepd's logs at info; a user's terminal only with -v, from init_post_opt. */
void acme_log_build_once(const char *plugin, int *logged, int options_parsed);

/* A Slurm node name usable in a spool path: not empty, no '/'. */
int acme_plain_node_name(const char *node);

#ifdef __cplusplus
}
#endif

#endif
