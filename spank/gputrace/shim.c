/* gputrace.so, the file plugstack.conf names: a C shim (spank/shim.h) in front of
   gputrace_impl.so (plugin.cpp and the files it dispatches to). What every job needs is done
   here, with libc alone:
    - sbatch/srun/salloc and slurmstepd: --gpu-telemetry registered, ACME_GPU_TELEMETRY made an
      alias of Slurm's own environment form; a value given is validated by the implementation;
    - slurmstepd's task_init: ACME_HEARTBEAT_FILE when the job's heartbeat directory is there;
    - the job prolog: the job's heartbeat directory (stall detection on, the default), and for a
      traced GPU job one fork that becomes its sampler (sampler_spawn_c.h: the detached child
      executes acme-gpu-sampler-start, which executes the sampler in its place).
   The implementation is loaded for a --gpu-telemetry value at submission and for the job epilog
   (sampler stop, textfile and heartbeat clean-up, the plugstack errors): a traced job's prolog
   costs what a plain job's does (#41). */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/stat.h>
#include <stdio.h>
#include <unistd.h>

#include "spank/impl_abi.h"
#include "spank/shim.h"
#include "spank/gputrace/core/heartbeat_dir_c.h"
#include "spank/gputrace/core/sampler_spawn_c.h"

ACME_SHIM_EXPORT const char plugin_name[] = "gputrace";
ACME_SHIM_EXPORT const char plugin_type[] = "spank";
ACME_SHIM_EXPORT const unsigned int plugin_version = SLURM_VERSION_NUMBER;
ACME_SHIM_EXPORT const unsigned int spank_plugin_version = 1;

static struct acme_impl g_impl = {"gputrace", "gputrace_impl.so", NULL, 0};
static int g_build_logged;
/* This process's plugstack arguments (Slurm keeps them for the plugin's life), for the option
   callback, which gets none. */
static int g_ac;
static char **g_av;

static int on_option(int val, const char *optarg, int remote);
static struct spank_option g_option = {
    "gpu-telemetry", "SECONDS|off",
    "[gputrace] sample this job's GPUs every SECONDS (default: the cluster's interval) into the node's telemetry "
    "spool; off disables it. Env: ACME_GPU_TELEMETRY",
    2, 0, on_option};

/* Slurm calls option callbacks more than once (environment, then command line) and again in
   slurmstepd (remote: nothing to do there). The value reaches the job prolog through
   spank_option_getopt. */
static int on_option(int val, const char *optarg, int remote) {
    (void)val;
    if (remote) return 0;
    acme_gputrace_validate_fn *validate = (acme_gputrace_validate_fn *)acme_impl_sym(
        &g_impl, "acme_gputrace_impl_validate", "--gpu-telemetry is accepted unchecked");
    return validate ? validate(g_ac, g_av, optarg) : 0;
}

ACME_SHIM_EXPORT int slurm_spank_init(spank_t sp, int ac, char **av) {
    acme_log_build_once("gputrace", &g_build_logged, 0);
    const spank_context_t ctx = spank_context();
    if (ctx != S_CTX_ALLOCATOR && ctx != S_CTX_LOCAL && ctx != S_CTX_REMOTE) return 0;
    g_ac = ac;
    g_av = av;
    if (ctx != S_CTX_REMOTE) {
        /* Slurm validates its own environment form through on_option (a bad value refuses the
           submission) and carries it to the job prolog like the flag; the flag still wins. */
        const char *env = getenv("ACME_GPU_TELEMETRY");
        if (env && *env) setenv(ACME_SUBMIT_ENV_GPU_TELEMETRY, env, 0);
    }
    if (spank_option_register(sp, &g_option) != ESPANK_SUCCESS)
        slurm_error("gputrace: cannot register --gpu-telemetry in %s context", ctx == S_CTX_REMOTE ? "remote"
                                                                              : ctx == S_CTX_LOCAL ? "local"
                                                                                                   : "allocator");
    return 0;
}

ACME_SHIM_EXPORT int slurm_spank_init_post_opt(spank_t sp, int ac, char **av) {
    (void)sp, (void)ac, (void)av;
    acme_log_build_once("gputrace", &g_build_logged, 1);
    return 0;
}

/* Stall detection's keys as gputrace_config.cpp reads them: stall= (parse_bool, default on) and
   heartbeat_dir= (an absolute directory, default the build's). */
static int stall_enabled(int ac, char **av) { return acme_arg_bool(ac, av, "stall", 1); }
static const char *heartbeat_base(int ac, char **av) {
    return acme_arg_path(ac, av, "heartbeat_dir", ACME_HEARTBEAT_DIR);
}

/* Each task: ACME_HEARTBEAT_FILE, <heartbeat_dir>/<job>/heartbeat.<node>, the file a trainer may
   touch each step (heartbeat_dir.hpp, stall.hpp's heartbeat_path). task_init runs as the job's
   user: the directory the prolog made private to them is there and theirs, else the job gets no
   variable (a trainer's touch must never fail on it). One stat and one setenv. */
ACME_SHIM_EXPORT int slurm_spank_task_init(spank_t sp, int ac, char **av) {
    if (spank_context() != S_CTX_REMOTE || !stall_enabled(ac, av)) return 0;
    uint32_t job_id = 0;
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) return 0;
    char node[256] = {0};
    if (spank_getenv(sp, "SLURMD_NODENAME", node, sizeof node) != ESPANK_SUCCESS || !acme_plain_node_name(node))
        return 0;
    char dir[1200], file[1500];
    if (acme_heartbeat_job_dir(dir, sizeof dir, heartbeat_base(ac, av), job_id) != 0) return 0;
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) return 0;
    if (snprintf(file, sizeof file, "%s/heartbeat.%s", dir, node) >= (int)sizeof file) return 0;
    spank_setenv(sp, "ACME_HEARTBEAT_FILE", file, 1);
    return 0;
}

/* Every job's tasks get ACME_HEARTBEAT_FILE (task_init above exports it when its directory is
   there), traced or not: the job's private directory is made here, as root, before any task
   (heartbeat_dir_c.h). */
static void prepare_heartbeat(spank_t sp, int ac, char **av) {
    uint32_t job_id = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS || spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS)
        return;
    char error[2048];
    if (acme_heartbeat_prepare(heartbeat_base(ac, av), job_id, uid, gid, error, sizeof error) != 0)
        slurm_error("gputrace: job %u: %s; the job gets no ACME_HEARTBEAT_FILE", job_id, error);
}

/* Whether the job may be traced here (sampler_start.hpp's sampler_launch decides the rest): a
   GPU job that gave --gpu-telemetry other than off, asked faultguard for recovery, or runs under
   default=on. `*optarg` is the value given (NULL: not given). */
static int traced(spank_t sp, int ac, char **av, const char **optarg) {
    const char *gpus = getenv("SLURM_JOB_GPUS");
    if (!gpus || !*gpus) return 0;
    char *value = NULL;
    if (spank_option_getopt(sp, &g_option, &value) == ESPANK_SUCCESS) {
        *optarg = value ? value : "";
        return strcmp(*optarg, "off") != 0;
    }
    return getenv(ACME_JOB_ENV_AUTO_RECOVER) != NULL || acme_arg_on_off(ac, av, "default", 0);
}

static double ms_since(const struct timespec *t0) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) * 1e3 + (double)(now.tv_nsec - t0->tv_nsec) / 1e6;
}

/* A value of the prolog's environment passed on only when it has the form the helper accepts
   (all digits, at most `max` of them): SLURM_JOB_RESTART_COUNT. */
static const char *digits_env(const char *name, size_t max) {
    const char *v = getenv(name);
    if (!v || !*v || strlen(v) > max) return NULL;
    for (const char *p = v; *p; ++p)
        if (*p < '0' || *p > '9') return NULL;
    return v;
}

/* A traced job's sampler, started without loading the implementation (#41): the values
   acme-gpu-sampler-start needs, from the spank items and the prolog's environment, on its
   command line (it checks each, sampler_start.hpp), and one fork (sampler_spawn_c.h). */
static void start_sampler(spank_t sp, int ac, char **av, const char *optarg) {
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint32_t job_id = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS || spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS) {
        slurm_error("gputrace: job prolog: no job id or owner; not tracing");
        return;
    }
    const char *node = getenv("SLURMD_NODENAME");
    if (!acme_plain_node_name(node) || strlen(node) > 255) {
        slurm_error("gputrace: job %u: SLURMD_NODENAME is not usable; not tracing", job_id);
        return;
    }
    /* The epilog stops the sampler through the implementation: without it, start none. */
    if (!acme_impl_present(&g_impl, "this job is not traced")) return;
    const char *gpus = getenv("SLURM_JOB_GPUS");
    const char *spool = acme_arg_path(ac, av, "spool", ACME_SPOOL_DIR);
    const char *sampler = acme_arg_path(ac, av, "sampler", ACME_HELPER_DIR "/acme-gpu-sampler");
    const char *slash = strrchr(sampler, '/');
    char helper[1200], run_dir[1100], pidfile[1500], log_path[1400];
    char job[16], uid_s[16], gid_s[16];
    snprintf(job, sizeof job, "%u", job_id);
    snprintf(uid_s, sizeof uid_s, "%u", (unsigned)uid);
    snprintf(gid_s, sizeof gid_s, "%u", (unsigned)gid);
    if (snprintf(helper, sizeof helper, "%.*s/acme-gpu-sampler-start", (int)(slash - sampler), sampler) >= (int)sizeof helper ||
        snprintf(run_dir, sizeof run_dir, "%s/run", spool) >= (int)sizeof run_dir ||
        snprintf(pidfile, sizeof pidfile, "%s/%s.%u.sampler.pid", run_dir, node, job_id) >= (int)sizeof pidfile ||
        snprintf(log_path, sizeof log_path, "%s/%s.sampler.log", spool, node) >= (int)sizeof log_path) {
        slurm_error("gputrace: job %u: the spool or sampler path is too long; not tracing", job_id);
        return;
    }
    const struct acme_sampler_job values = {job, uid_s, gid_s, node, gpus, optarg, getenv(ACME_JOB_ENV_AUTO_RECOVER) != NULL,
                                            getenv(ACME_JOB_ENV_CKPT_DIR), digits_env("SLURM_JOB_RESTART_COUNT", 6),
                                            getenv("SLURM_JOB_SLUID"), getenv("SLURM_CONF")};
    char **argv = calloc(ACME_SAMPLER_START_ARGV_MAX(ac), sizeof *argv);
    if (!argv) {
        slurm_error("gputrace: job %u: out of memory; not tracing", job_id);
        return;
    }
    acme_sampler_start_argv(&values, ac, av, argv);
    const struct acme_sampler_spawn spawn = {
        helper, argv, spool, run_dir, pidfile, log_path, job_id,
        acme_arg_seconds(ac, av, "start_wait", 0, 600, 1.0)};
    char error[1600];
    if (acme_sampler_spawn_detached(&spawn, error, sizeof error) != 0)
        slurm_error("gputrace: job %u: cannot start the sampler: %s", job_id, error);
    else
        slurm_info("gputrace: job %u: sampling GPUs %s from its first step (prolog %.0f ms)", job_id, gpus,
                   ms_since(&t0));
    free(argv);
}

ACME_SHIM_EXPORT int slurm_spank_job_prolog(spank_t sp, int ac, char **av) {
    acme_log_build_once("gputrace", &g_build_logged, 0);
    if (spank_context() != S_CTX_JOB_SCRIPT) return 0;
    if (stall_enabled(ac, av)) prepare_heartbeat(sp, ac, av);
    const char *optarg = NULL;
    if (traced(sp, ac, av, &optarg)) start_sampler(sp, ac, av, optarg);
    return 0;
}

ACME_SHIM_EXPORT int slurm_spank_job_epilog(spank_t sp, int ac, char **av) {
    acme_log_build_once("gputrace", &g_build_logged, 0);
    if (spank_context() != S_CTX_JOB_SCRIPT) return 0;
    acme_gputrace_job_script_fn *epilog = (acme_gputrace_job_script_fn *)acme_impl_sym(
        &g_impl, "acme_gputrace_impl_job_epilog", "no sampler is stopped and nothing is cleaned up for this job");
    return epilog ? epilog(sp, ac, av) : 0;
}
