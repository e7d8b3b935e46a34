// gputrace.so: GPU telemetry for every job that asks (--gpu-telemetry) or, with default=on,
// every GPU job. This file only dispatches each callback on spank_context() (pyxis's shape):
//  - args.cpp (sbatch/salloc/srun, and slurmstepd's registration): the flag is validated;
//  - args.cpp again (slurmstepd's task_init): ACME_HEARTBEAT_FILE into each task's environment;
//  - job_script.cpp (slurmd's prolog/epilog, root, once per node): start one detached
//    acme-gpu-sampler per job; stop it and wait a bounded time for its last flush.
// Nothing else runs in slurmstepd or slurmd. Every callback fails open: telemetry trouble is
// logged, never the job's problem.
#include <atomic>

#include "spank/gputrace/plugin.hpp"
#include "spank/spank_abi.hpp"

extern "C" {
ACME_SPANK_EXPORT extern const char plugin_name[] = "gputrace";
ACME_SPANK_EXPORT extern const char plugin_type[] = "spank";
ACME_SPANK_EXPORT extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
ACME_SPANK_EXPORT extern const unsigned int spank_plugin_version = 1;
}

namespace {

using acme::spank::guarded;
using namespace acme::telemetry::plugin;

// Set by the first callback of this process that logs the build line.
std::atomic<bool> g_build_logged{false};

}  // namespace

extern "C" {

// init, job_prolog and job_epilog each open the callbacks of some process (slurmstepd, the
// job_script processes): each logs the build line before anything else; on a user's terminal
// init_post_opt does, once -v is known.
ACME_SPANK_EXPORT int slurm_spank_init(spank_t sp, int ac, char** av) noexcept {
    acme::spank::log_build_once(kPlugin, g_build_logged, false);
    return guarded(kPlugin, "init", 0, [&] {
        switch (spank_context()) {
            case S_CTX_ALLOCATOR:
            case S_CTX_LOCAL:
            case S_CTX_REMOTE: return init_options(sp, ac, av);
            default: return 0;
        }
    });
}

ACME_SPANK_EXPORT int slurm_spank_init_post_opt(spank_t, int, char**) noexcept {
    acme::spank::log_build_once(kPlugin, g_build_logged, true);
    return 0;
}

// Each task: ACME_HEARTBEAT_FILE, the file a trainer may touch each step (stall detection).
ACME_SPANK_EXPORT int slurm_spank_task_init(spank_t sp, int, char**) noexcept {
    return guarded(kPlugin, "task_init", 0, [&] { return spank_context() == S_CTX_REMOTE ? export_heartbeat(sp) : 0; });
}

ACME_SPANK_EXPORT int slurm_spank_job_prolog(spank_t sp, int ac, char** av) noexcept {
    acme::spank::log_build_once(kPlugin, g_build_logged, false);
    return guarded(kPlugin, "job_prolog", 0,
                   [&] { return spank_context() == S_CTX_JOB_SCRIPT ? job_script_prolog(sp, ac, av) : 0; });
}

ACME_SPANK_EXPORT int slurm_spank_job_epilog(spank_t sp, int ac, char** av) noexcept {
    acme::spank::log_build_once(kPlugin, g_build_logged, false);
    return guarded(kPlugin, "job_epilog", 0,
                   [&] { return spank_context() == S_CTX_JOB_SCRIPT ? job_script_epilog(sp, ac, av) : 0; });
}

}  // extern "C"
