/* The sampler's wait for its job's start (gputrace(8) start_wait), done before the sampler is
   exec'ed: the job prolog's detached child (sampler_spawn_c.h) waits here, at background
   priority, and execs acme-gpu-sampler-start (then the sampler) only once a step of the job's
   work runs on the node. The sampler's own start (its
   dynamic linking and static initialisation, ~10 ms of CPU) then stays out of the time srun waits
   for (the job prolog, the Prolog script, the extern step). libc alone, and only
   async-signal-safe calls: this runs between fork and exec of a process that may have threads. */
#ifndef ACME_SAMPLER_WAIT_C_H
#define ACME_SAMPLER_WAIT_C_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Decimal digits of `v` into `out` (at least 21 bytes), async-signal-safe; returns their count
   (no NUL). The prolog's fork (sampler_spawn_c.c) writes the pid file with it too. */
size_t acme_put_decimal(char *out, unsigned long long v);

/* 1 when a slurmstepd of one of the job's work steps (any step but "extern": the batch script,
   an srun step) runs under `proc_root` ("/proc", or a test's tree): a root process whose
   cmdline starts "slurmstepd: [JOB."; 0 when none does; -1 when `proc_root` cannot be read. */
int acme_job_work_stepd_running(const char *proc_root, unsigned long long job_id);

/* The start time in the text of a /proc/PID/stat (NUL-terminated): 0 with *start set, -1 when
   the text has no such field. */
int acme_stat_start_time(const char *stat, unsigned long long *start);

/* Process `pid`'s start time (/proc/PID/stat's 22nd field, clock ticks after boot) under
   `proc_root`; 0 with *start set, -1 when it cannot be read. The start time survives exec and
   tells a pid from a later process that reuses it. */
int acme_proc_start_time(const char *proc_root, long pid, unsigned long long *start);

/* Blocks SIGTERM, SIGINT and SIGHUP in this process; the wait below takes them. */
void acme_sampler_block_stop_signals(void);

/* Waits at most `seconds` for acme_job_work_stepd_running (a look every 50 ms; one that cannot
   tell ends the wait). A SIGTERM, SIGINT or SIGHUP (blocked first) ends the wait and is left
   pending, so the sampler exec'ed next receives it as soon as it unblocks them, once its
   handlers are in place: the epilog's stop still gets a final flush. */
void acme_sampler_wait_for_job(const char *proc_root, unsigned long long job_id, double seconds);

#ifdef __cplusplus
}
#endif

#endif
