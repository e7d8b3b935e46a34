/* The job prolog's start of a job's sampler, in gputrace's C shim (no C++ loaded into
   `slurmstepd spank prolog`, #41): one fork, and the prolog returns. libc alone.

   The prolog (root) forks an intermediate child that starts a new session and forks the
   detached child, writes that child's "PID STARTTIME\n" to the sampler's pid file and exits;
   the prolog reaps it, so the pid file is in place before the prolog returns, whatever the job
   does next (a job that ends at once still has its epilog find and stop that process). The
   detached child keeps SIGTERM, SIGINT and SIGHUP blocked, resets everything else it inherited
   (dispositions, descriptors: stdin/stdout on /dev/null, stderr appended to the sampler's log),
   lowers its priority (spawn.hpp's Priority::background), waits for the job's first step
   (start_wait, sampler_wait_c.h) and executes `helper` (acme-gpu-sampler-start) with `argv` and
   an environment of PATH alone. The helper executes the sampler in its place: the same pid for
   the job's whole life, the stop signals still blocked until the sampler's handlers are in. */
#ifndef ACME_SAMPLER_SPAWN_C_H
#define ACME_SAMPLER_SPAWN_C_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct acme_sampler_spawn {
    const char *helper;      /* the program to execute (argv[0] is its name for ps) */
    char *const *argv;       /* NULL-terminated */
    const char *spool;       /* made 0700 when missing, as the sampler would */
    const char *run_dir;     /* <spool>/run, likewise */
    const char *pidfile;     /* <run_dir>/<node>.<job>.sampler.pid (sampler_paths.hpp) */
    const char *log_path;    /* the helper's and sampler's stderr (appended; /dev/null if it cannot be opened) */
    unsigned long long job_id;
    double start_wait;       /* seconds the child waits at most for the job's first step; 0: none */
};

/* The job's values the shim hands acme-gpu-sampler-start (sampler_start.hpp reads them back):
   strings as the prolog has them; NULL for one that is not there. */
struct acme_sampler_job {
    const char *job, *uid, *gid; /* decimal */
    const char *node;            /* SLURMD_NODENAME */
    const char *gpus;            /* SLURM_JOB_GPUS */
    const char *telemetry;       /* the --gpu-telemetry value given ("": the bare flag) */
    int auto_recover;            /* faultguard's --auto-recover given */
    const char *ckpt_dir;        /* faultguard's --ckpt-dir */
    const char *restart;         /* SLURM_JOB_RESTART_COUNT */
    const char *sluid;           /* SLURM_JOB_SLUID */
    const char *slurm_conf;      /* SLURM_CONF */
};

/* The words acme_sampler_start_argv writes at most, its NULL included. */
#define ACME_SAMPLER_START_ARGV_MAX(ac) (2 * (size_t)(ac) + 26)

/* acme-gpu-sampler-start's argv: its name, "--KEY VALUE" pairs for `j` (an empty or NULL value is
   left out), then "--arg WORD" for each plugstack word, NULL-terminated, into `out` (at least
   ACME_SAMPLER_START_ARGV_MAX(ac) entries; the pointers are `j`'s and `av`'s). Its count. */
size_t acme_sampler_start_argv(const struct acme_sampler_job *j, int ac, char **av, char **out);

/* 0 once the detached child runs and the pid file names it; -1 with one line in `error`. */
int acme_sampler_spawn_detached(const struct acme_sampler_spawn *s, char *error, size_t size);

/* Writes "PID STARTTIME\n" for `pid` (its start time under /proc) to `pidfile` (O_NOFOLLOW,
   0644); 0 on success. Async-signal-safe. */
int acme_sampler_write_pidfile(const char *pidfile, long pid);

#ifdef __cplusplus
}
#endif

#endif
