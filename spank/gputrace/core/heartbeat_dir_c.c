/* The per-job heartbeat directories (heartbeat_dir_c.h, heartbeat_dir.hpp). */
#include "spank/gputrace/core/heartbeat_dir_c.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

static int say(char *error, size_t size, const char *format, ...) __attribute__((format(printf, 3, 4)));
static int say(char *error, size_t size, const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    if (error && size) vsnprintf(error, size, format, ap);
    va_end(ap);
    return -1;
}

/* Opens `base` one component at a time from "/", making what is missing (0755): every directory
   on the way must be root's or the caller's, so no other user can rename or replace what follows
   (a sticky /tmp is fine: nobody else may rename root's entries in it); the base itself must be
   the caller's (root's, in the prolog) and not writable by group or others. The descriptor, or
   -1 with one line in `error`. */
static int open_base(const char *base, int create, char *error, size_t size) {
    if (!base[0] || base[0] != '/') return say(error, size, "heartbeat_dir %s: not an absolute path", base);
    int dir = open("/", DIR_FLAGS);
    if (dir < 0) return say(error, size, "heartbeat_dir %s: cannot open /: %s", base, strerror(errno));
    const char *p = base;
    int parts = 0;
    char name[1025];
    for (;;) {
        while (*p == '/') ++p;
        if (!*p) break;
        const char *end = strchr(p, '/');
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len >= sizeof name) {
            close(dir);
            return say(error, size, "heartbeat_dir %s: a name on the way is too long", base);
        }
        memcpy(name, p, len);
        name[len] = '\0';
        p += len;
        ++parts;
        while (*p == '/') ++p;
        const int last = *p == '\0';
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
            close(dir);
            return say(error, size, "heartbeat_dir %s: . or .. in the path", base);
        }
        int next = openat(dir, name, DIR_FLAGS);
        if (next < 0 && errno == ENOENT && create) {
            if (mkdirat(dir, name, 0755) != 0 && errno != EEXIST) {
                const int e = errno;
                close(dir);
                return say(error, size, "heartbeat_dir %s: cannot make %s: %s", base, name, strerror(e));
            }
            next = openat(dir, name, DIR_FLAGS);
        }
        if (next < 0) {
            const int e = errno;
            close(dir);
            return say(error, size, "heartbeat_dir %s: cannot open %s%s: %s", base, name,
                       e == ELOOP || e == ENOTDIR ? " (a symlink or not a directory)" : "", strerror(e));
        }
        close(dir);
        dir = next;
        struct stat st;
        if (fstat(dir, &st) != 0) {
            const int e = errno;
            close(dir);
            return say(error, size, "heartbeat_dir %s: cannot stat %s: %s", base, name, strerror(e));
        }
        if (last ? st.st_uid != geteuid() : st.st_uid != 0 && st.st_uid != geteuid()) {
            close(dir);
            return say(error, size, "heartbeat_dir %s: %s is owned by uid %u, not by uid %u: make it root's, mode 0755",
                       base, name, (unsigned)st.st_uid, (unsigned)geteuid());
        }
        if (last && (st.st_mode & (S_IWGRP | S_IWOTH))) {
            close(dir);
            return say(error, size, "heartbeat_dir %s: writable by group or others (mode %o): make it mode 0755", base,
                       (unsigned)(st.st_mode & 07777));
        }
    }
    if (parts == 0 && create) {
        close(dir);
        return say(error, size, "heartbeat_dir %s: / itself is no place for it", base);
    }
    return dir;
}

/* Unlinks every entry of `dirfd` that is not a directory (a symlink is removed, never followed),
   at most 4096 looked at. */
static void remove_plain_entries(int dirfd) {
    const int copy = openat(dirfd, ".", DIR_FLAGS);
    if (copy < 0) return;
    DIR *d = fdopendir(copy);
    if (!d) {
        close(copy);
        return;
    }
    char **names = NULL;
    size_t count = 0, room = 0;
    int budget = 4096;
    const struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (--budget < 0) break;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        struct stat st;
        if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || S_ISDIR(st.st_mode)) continue;
        if (count == room) {
            const size_t more = room ? room * 2 : 16;
            char **grown = realloc(names, more * sizeof *names);
            if (!grown) break;
            names = grown;
            room = more;
        }
        if ((names[count] = strdup(e->d_name)) != NULL) ++count;
    }
    closedir(d);
    for (size_t i = 0; i < count; ++i) {
        unlinkat(dirfd, names[i], 0);
        free(names[i]);
    }
    free(names);
}

int acme_heartbeat_job_dir(char *out, size_t size, const char *base, long long job_id) {
    size_t n = strlen(base);
    while (n > 1 && base[n - 1] == '/') --n;
    const int len = snprintf(out, size, "%.*s/%lld", (int)n, base, job_id);
    return len > 0 && (size_t)len < size ? 0 : -1;
}

int acme_heartbeat_prepare(const char *base, long long job_id, uid_t uid, gid_t gid, char *error, size_t size) {
    const int b = open_base(base, 1, error, size);
    if (b < 0) return -1;
    char name[32];
    snprintf(name, sizeof name, "%lld", job_id);
    const int made = mkdirat(b, name, 0700) == 0;
    if (!made && errno != EEXIST) {
        const int e = errno;
        close(b);
        return say(error, size, "heartbeat_dir %s: cannot make %s: %s", base, name, strerror(e));
    }
    const int job = openat(b, name, DIR_FLAGS);
    if (job < 0) {
        const int e = errno;
        close(b);
        return say(error, size, "heartbeat_dir %s: cannot open %s: %s", base, name, strerror(e));
    }
    struct stat st;
    if (fstat(job, &st) != 0) {
        const int e = errno;
        close(job);
        close(b);
        return say(error, size, "heartbeat_dir %s: cannot stat %s: %s", base, name, strerror(e));
    }
    /* Left by another user's job of the same id (a reused id after a crash): nothing of theirs
       may be handed to this one. */
    if (!made && st.st_uid != uid && st.st_uid != geteuid()) remove_plain_entries(job);
    int rc = 0;
    if (fchown(job, uid, gid) != 0 || fchmod(job, 0700) != 0) {
        const int e = errno;
        if (made) unlinkat(b, name, AT_REMOVEDIR);
        rc = say(error, size, "heartbeat_dir %s: cannot give %s to uid %u: %s", base, name, (unsigned)uid, strerror(e));
    }
    close(job);
    close(b);
    return rc;
}

void acme_heartbeat_remove(const char *base, long long job_id) {
    const int b = open_base(base, 0, NULL, 0);
    if (b < 0) return;
    char name[32];
    snprintf(name, sizeof name, "%lld", job_id);
    const int job = openat(b, name, DIR_FLAGS);
    if (job >= 0) {
        remove_plain_entries(job);
        close(job);
        unlinkat(b, name, AT_REMOVEDIR); /* ENOTEMPTY: the user made subdirectories; left */
    }
    close(b);
}

int acme_heartbeat_mtime(const char *base, long long job_id, const char *node, struct timespec *mtime) {
    const int b = open_base(base, 0, NULL, 0);
    if (b < 0) return -1;
    char name[32];
    snprintf(name, sizeof name, "%lld", job_id);
    const int job = openat(b, name, DIR_FLAGS);
    close(b);
    if (job < 0) return -1;
    char file[1100];
    const int n = snprintf(file, sizeof file, "heartbeat.%s", node);
    struct stat st;
    const int ok = n > 0 && (size_t)n < sizeof file && strchr(node, '/') == NULL &&
                   fstatat(job, file, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
    close(job);
    if (!ok) return -1;
    *mtime = st.st_mtim;
    return 0;
}
