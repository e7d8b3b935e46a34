/* faultguard.so, the file plugstack.conf names: a C shim (spank/shim.h) in front of
   faultguard_impl.so (plugin.cpp and the files it dispatches to). What every job needs is done
   here, with libc alone:
    - sbatch/srun/salloc and slurmstepd: the options registered, ACME_AUTO_RECOVER and
      ACME_CKPT_DIR made aliases of Slurm's own environment forms;
    - slurmstepd's task_exit: each task's wait status appended to the job's hand-off file in the
      spool (task_exit_log.hpp's format and path), which the epilog reads, for every job (the
      implementation adds only the checkpoint a resumed run started from);
    - the job prolog of a job without GPUs (no health gate to run).
   The implementation is loaded for an option given (validated at submission, remembered in
   slurmstepd, which then also sets the recovery environment), for a GPU job's prolog (the health
   gate) and for every job epilog (the diagnosis helper, detached for a job that ended cleanly). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "spank/faultguard/core/gate_ask_c.h"
#include "spank/impl_abi.h"
#include "spank/shim.h"

ACME_SHIM_EXPORT const char plugin_name[] = "faultguard";
ACME_SHIM_EXPORT const char plugin_type[] = "spank";
ACME_SHIM_EXPORT const unsigned int plugin_version = SLURM_VERSION_NUMBER;
ACME_SHIM_EXPORT const unsigned int spank_plugin_version = 1;

static struct acme_impl g_impl = {"faultguard", "faultguard_impl.so", NULL, 0};
static int g_build_logged;

static int forward_option(int which, const char *name, const char *optarg, int remote) {
    acme_faultguard_option_fn *fn = (acme_faultguard_option_fn *)acme_impl_sym(
        &g_impl, "acme_faultguard_impl_option",
        remote ? "the job's faultguard options are ignored on this node" : "faultguard's options are accepted unchecked");
    (void)name;
    return fn ? fn(which, optarg, remote) : 0;
}
static int on_job_type(int val, const char *optarg, int remote) {
    (void)val;
    return forward_option(ACME_FG_JOB_TYPE, "llm-job-type", optarg, remote);
}
static int on_auto_recover(int val, const char *optarg, int remote) {
    (void)val;
    return forward_option(ACME_FG_AUTO_RECOVER, "auto-recover", optarg, remote);
}
static int on_ckpt_dir(int val, const char *optarg, int remote) {
    (void)val;
    return forward_option(ACME_FG_CKPT_DIR, "ckpt-dir", optarg, remote);
}

static struct spank_option g_options[] = {
    {"llm-job-type", "TYPE",
     "[faultguard] what this job is, for reports: pretrain, sft, eval, debug, mllm or other (default: from the "
     "job comment's llm-job-type=TYPE, else guessed from the job name)",
     1, 0, on_job_type},
    {"auto-recover", "MAX_RESTARTS",
     "[faultguard] on an infrastructure failure drain the faulty node and requeue this job, at most MAX_RESTARTS "
     "times (default 3). Env: ACME_AUTO_RECOVER",
     2, 0, on_auto_recover},
    {"ckpt-dir", "PATH",
     "[faultguard] the job's checkpoint directory: every start gets ACME_RESUME_CKPT (the newest complete "
     "checkpoint, empty on a fresh start) and ACME_RESTART_COUNT. Env: ACME_CKPT_DIR",
     1, 0, on_ckpt_dir},
};

/* Environment forms: aliases of Slurm's own (option_env.hpp's submit_option_env), so Slurm
   validates them through the option callbacks and carries them like the flags. */
static const char *const kEnvAliases[][2] = {
    {"ACME_AUTO_RECOVER", ACME_SUBMIT_ENV_AUTO_RECOVER},
    {"ACME_CKPT_DIR", ACME_SUBMIT_ENV_CKPT_DIR},
};

ACME_SHIM_EXPORT int slurm_spank_init(spank_t sp, int ac, char **av) {
    (void)ac, (void)av;
    acme_log_build_once("faultguard", &g_build_logged, 0);
    const spank_context_t ctx = spank_context();
    if (ctx != S_CTX_ALLOCATOR && ctx != S_CTX_LOCAL && ctx != S_CTX_REMOTE) return 0;
    for (size_t i = 0; i < sizeof g_options / sizeof *g_options; ++i)
        if (spank_option_register(sp, &g_options[i]) != ESPANK_SUCCESS)
            slurm_error("faultguard: cannot register --%s in %s context", g_options[i].name,
                        ctx == S_CTX_REMOTE ? "remote" : ctx == S_CTX_LOCAL ? "local" : "allocator");
    if (ctx != S_CTX_REMOTE)
        for (size_t i = 0; i < sizeof kEnvAliases / sizeof *kEnvAliases; ++i) {
            const char *v = getenv(kEnvAliases[i][0]);
            if (v && *v) setenv(kEnvAliases[i][1], v, 0);
        }
    return 0;
}

/* slurmstepd, for a job whose options loaded the implementation (remote option callbacks run
   after init): the recovery environment. */
static int step_call(const char *name, spank_t sp, int ac, char **av) {
    if (spank_context() != S_CTX_REMOTE || !acme_impl_loaded(&g_impl)) return 0;
    acme_faultguard_step_fn *fn =
        (acme_faultguard_step_fn *)acme_impl_sym(&g_impl, name, "the job's recovery environment is not set");
    return fn ? fn(sp, ac, av) : 0;
}

ACME_SHIM_EXPORT int slurm_spank_init_post_opt(spank_t sp, int ac, char **av) {
    acme_log_build_once("faultguard", &g_build_logged, 1);
    return step_call("acme_faultguard_impl_init_post_opt", sp, ac, av);
}

ACME_SHIM_EXPORT int slurm_spank_task_init(spank_t sp, int ac, char **av) {
    return step_call("acme_faultguard_impl_task_init", sp, ac, av);
}

static void append_task_exit(spank_t sp, int ac, char **av) {
    uint32_t job_id = 0, step_id = 0, task_id = 0;
    int status = 0;
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_STEPID, &step_id) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_TASK_GLOBAL_ID, &task_id) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_TASK_EXIT_STATUS, &status) != ESPANK_SUCCESS)
        return;
    char node[256] = {0};
    if (spank_getenv(sp, "SLURMD_NODENAME", node, sizeof node) != ESPANK_SUCCESS || !acme_plain_node_name(node))
        return;
    /* faultguard_config.cpp's spool=: the last absolute path given, else the build's. */
    const char *spool = acme_arg_path(ac, av, "spool", ACME_SPOOL_DIR);
    char run[1100], path[1500], line[128];
    if (snprintf(run, sizeof run, "%s/run", spool) >= (int)sizeof run) return;
    if (snprintf(path, sizeof path, "%s/%s.%u.task_exits", run, node, job_id) >= (int)sizeof path) return;
    mkdir(spool, 0700);
    mkdir(run, 0700);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    const int len = acme_format_task_exit(line, sizeof line, step_id, task_id, status,
                                          (double)now.tv_sec + (double)now.tv_nsec / 1e9);
    if (len < 0) return;
    const int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0640);
    if (fd < 0) {
        slurm_error("faultguard: job %u: cannot record task %u's exit in %s", job_id, task_id, path);
        return;
    }
    if (write(fd, line, (size_t)len) != (ssize_t)len) slurm_error("faultguard: job %u: short write to %s", job_id, path);
    close(fd);
}

/* Each task's raw wait status, one line appended to <spool>/run/<node>.<job>.task_exits with one
   write (task_exit_log.hpp: "STEP TASK STATUS TS\n"); no parsing, nothing that blocks. This is the
   one writer of that line, with or without the implementation; a job whose options loaded the
   implementation then gets its task_exit, which hands over the checkpoint the run resumed from. */
ACME_SHIM_EXPORT int slurm_spank_task_exit(spank_t sp, int ac, char **av) {
    if (spank_context() != S_CTX_REMOTE) return 0;
    append_task_exit(sp, ac, av);
    return acme_impl_loaded(&g_impl) ? step_call("acme_faultguard_impl_task_exit", sp, ac, av) : 0;
}

/* The resident health gate's pass, asked here (gate_ask_c.h) with the values job_script.cpp's
   prolog would send: 1 when it passed the job (logged as the implementation logs it). Anything
   else is the implementation's to handle, as before (it asks again and runs the gate process). */
static int resident_gate_passed(spank_t sp, int ac, char **av, const char *gpus) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* faultguard_config.cpp's health_gate= (default no), gate_resident= (default 300 s; 0: none),
       gate_timeout= (default 8 s), nvml= and rules= (the resident gate checks the job with them). */
    if (acme_arg_seconds(ac, av, "gate_resident", 0, 86400, 300) <= 0) return 0;
    const double timeout = acme_arg_seconds(ac, av, "gate_timeout", 1e-9, 600, 8);
    const char *nvml = "libnvidia-ml.so.1";
    for (int i = 0; i < ac; ++i)
        if (strncmp(av[i], "nvml=", 5) == 0 && av[i][5] && strlen(av[i] + 5) <= 1024) nvml = av[i] + 5;
    const char *rules = acme_arg_path(ac, av, "rules", ACME_CONF_DIR "/rules.d");
    const char *spool = acme_arg_path(ac, av, "spool", ACME_SPOOL_DIR);
    const char *node = getenv("SLURMD_NODENAME");
    uint32_t job_id = 0;
    if (!acme_plain_node_name(node) || spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) return 0;
    char socket_path[1400], request[4200], text[4200];
    if (snprintf(socket_path, sizeof socket_path, "%s/run/%s.gate.sock", spool, node) >= (int)sizeof socket_path) return 0;
    const int len = acme_gate_request_line(request, sizeof request, job_id, gpus, nvml, rules);
    /* job_script.cpp's kResidentAskSeconds (1 s), or half the gate's timeout when that is less. */
    if (len < 0 || !acme_gate_ask_passed(socket_path, request, (size_t)len, timeout / 2 < 1.0 ? timeout / 2 : 1.0, text,
                                         sizeof text))
        return 0;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    slurm_info("faultguard: %s (prolog %.0f ms)", text,
               (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
    return 1;
}

/* The health gate: only a job with GPUs has anything to gate (job_script.cpp returns before its
   arguments are parsed otherwise), so only such a job's prolog may need the implementation: not
   where health_gate= is off, nor when the node's resident gate passes the job (#41). */
ACME_SHIM_EXPORT int slurm_spank_job_prolog(spank_t sp, int ac, char **av) {
    acme_log_build_once("faultguard", &g_build_logged, 0);
    const char *gpus = getenv("SLURM_JOB_GPUS");
    if (spank_context() != S_CTX_JOB_SCRIPT || !gpus || !*gpus) return 0;
    if (!acme_arg_bool(ac, av, "health_gate", 0) || resident_gate_passed(sp, ac, av, gpus)) return 0;
    acme_faultguard_job_script_fn *prolog = (acme_faultguard_job_script_fn *)acme_impl_sym(
        &g_impl, "acme_faultguard_impl_job_prolog", "this job runs without the health gate");
    return prolog ? prolog(sp, ac, av) : 0;
}

ACME_SHIM_EXPORT int slurm_spank_job_epilog(spank_t sp, int ac, char **av) {
    acme_log_build_once("faultguard", &g_build_logged, 0);
    if (spank_context() != S_CTX_JOB_SCRIPT) return 0;
    acme_faultguard_job_script_fn *epilog = (acme_faultguard_job_script_fn *)acme_impl_sym(
        &g_impl, "acme_faultguard_impl_job_epilog", "this job is not diagnosed and has no record from this node");
    return epilog ? epilog(sp, ac, av) : 0;
}
