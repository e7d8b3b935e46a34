// faultguard.so: how every job ended, and why it failed. This file only dispatches each
// callback on spank_context() to the file for that context (pyxis_dispatch.c's shape):
//  - args.cpp (sbatch/srun/salloc, and the options of every context): option registration and
//    validation; a bad value refuses the submission;
//  - slurmstepd.cpp (remote): task_exit records each task's wait status; recovery's env;
//  - job_script.cpp (slurmd's prolog/epilog): the health gate and the bounded diagnosis helper.
// Every callback catches everything and fails open: a job never fails because of faultguard.
#include <atomic>

#include "spank/faultguard/plugin.hpp"
#include "spank/spank_abi.hpp"

extern "C" {
ACME_SPANK_EXPORT extern const char plugin_name[] = "faultguard";
ACME_SPANK_EXPORT extern const char plugin_type[] = "spank";
ACME_SPANK_EXPORT extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
ACME_SPANK_EXPORT extern const unsigned int spank_plugin_version = 1;
}

namespace {

using acme::spank::guarded;
using namespace acme::faultguard::plugin;

// Set by the first callback of this process that logs the build line.
std::atomic<bool> g_build_logged{false};

}  // namespace

extern "C" {

// init, job_prolog and job_epilog each open the callbacks of some process (slurmstepd, the
// job_script processes): each logs the build line before anything else; on a user's terminal
// init_post_opt does, once -v is known.
ACME_SPANK_EXPORT int slurm_spank_init(spank_t sp, int, char**) noexcept {
    acme::spank::log_build_once(kPlugin, g_build_logged, false);
    return guarded(kPlugin, "init", 0, [&] {
        switch (spank_context()) {
            case S_CTX_ALLOCATOR:
            case S_CTX_LOCAL: return submit_init(sp);
            case S_CTX_REMOTE: return register_options(sp);
            default: return 0;
        }
    });
}

ACME_SPANK_EXPORT int slurm_spank_init_post_opt(spank_t sp, int ac, char** av) noexcept {
    acme::spank::log_build_once(kPlugin, g_build_logged, true);
    return guarded(kPlugin, "init_post_opt", 0,
                   [&] { return spank_context() == S_CTX_REMOTE ? slurmstepd_init_post_opt(sp, ac, av) : 0; });
}

ACME_SPANK_EXPORT int slurm_spank_task_init(spank_t sp, int, char**) noexcept {
    return guarded(kPlugin, "task_init", 0,
                   [&] { return spank_context() == S_CTX_REMOTE ? slurmstepd_task_init(sp) : 0; });
}

ACME_SPANK_EXPORT int slurm_spank_task_exit(spank_t sp, int ac, char** av) noexcept {
    return guarded(kPlugin, "task_exit", 0,
                   [&] { return spank_context() == S_CTX_REMOTE ? slurmstepd_task_exit(sp, ac, av) : 0; });
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
