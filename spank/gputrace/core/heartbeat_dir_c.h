/* The per-job heartbeat directories (heartbeat_dir.hpp says what and why), in plain C: the
   gputrace shim makes a job's directory in its prolog without loading the C++ implementation,
   and heartbeat_dir.cpp is this code's C++ face. One implementation of what root does there. */
#ifndef ACME_HEARTBEAT_DIR_C_H
#define ACME_HEARTBEAT_DIR_C_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* heartbeat_job_dir, <base>/<job> (trailing '/' of base dropped), into `out`: 0, or -1 when it
   does not fit. */
int acme_heartbeat_job_dir(char *out, size_t size, const char *base, long long job_id);
/* prepare_heartbeat_dir: 0, or -1 with one line in `error` (nothing is then made). */
int acme_heartbeat_prepare(const char *base, long long job_id, uid_t uid, gid_t gid, char *error, size_t error_size);
/* remove_heartbeat_dir. */
void acme_heartbeat_remove(const char *base, long long job_id);
/* heartbeat_mtime: the mtime of <base>/<job>/heartbeat.<node> into `mtime` (0), or -1 when it is
   not there or not a plain file (never followed; every directory on the way opened O_NOFOLLOW). */
int acme_heartbeat_mtime(const char *base, long long job_id, const char *node, struct timespec *mtime);

#ifdef __cplusplus
}
#endif

#endif
