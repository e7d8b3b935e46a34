// faultguard_impl.so: faultguard's C++ side, loaded by the shim faultguard.so (shim.c) only where
// a job needs it (spank/shim.h). This file only exports the entry points impl_abi.h names,
// each dispatched to the file for its context (pyxis_dispatch.c's shape):
//  - args.cpp (sbatch/srun/salloc, and slurmstepd): an option's value validated, or remembered;
//  - slurmstepd.cpp (remote, a job that gave an option): recovery's env; task_exit records each
//    task's wait status (the shim does that itself for every other job);
//  - job_script.cpp (slurmd's prolog/epilog): the health gate and the bounded diagnosis helper.
// Every entry point catches everything and fails open: a job never fails because of faultguard.
#include "spank/faultguard/plugin.hpp"
#include "spank/impl_abi.h"
#include "spank/spank_abi.hpp"

using acme::spank::guarded;
using namespace acme::faultguard::plugin;

extern "C" {

ACME_SPANK_EXPORT int acme_faultguard_impl_option(int which, const char* optarg, int remote) noexcept {
    return guarded(kPlugin, "option", remote ? 0 : -1, [&] { return on_option(which, optarg, remote); });
}

ACME_SPANK_EXPORT int acme_faultguard_impl_init_post_opt(spank_t sp, int ac, char** av) noexcept {
    return guarded(kPlugin, "init_post_opt", 0, [&] { return slurmstepd_init_post_opt(sp, ac, av); });
}

ACME_SPANK_EXPORT int acme_faultguard_impl_task_init(spank_t sp, int, char**) noexcept {
    return guarded(kPlugin, "task_init", 0, [&] { return slurmstepd_task_init(sp); });
}

ACME_SPANK_EXPORT int acme_faultguard_impl_task_exit(spank_t sp, int ac, char** av) noexcept {
    return guarded(kPlugin, "task_exit", 0, [&] { return slurmstepd_task_exit(sp, ac, av); });
}

ACME_SPANK_EXPORT int acme_faultguard_impl_job_prolog(spank_t sp, int ac, char** av) noexcept {
    return guarded(kPlugin, "job_prolog", 0, [&] { return job_script_prolog(sp, ac, av); });
}

ACME_SPANK_EXPORT int acme_faultguard_impl_job_epilog(spank_t sp, int ac, char** av) noexcept {
    return guarded(kPlugin, "job_epilog", 0, [&] { return job_script_epilog(sp, ac, av); });
}

}  // extern "C"

// The shim looks these up by name with these types (impl_abi.h).
[[maybe_unused]] static acme_faultguard_option_fn* const kOption = acme_faultguard_impl_option;
[[maybe_unused]] static acme_faultguard_step_fn* const kSteps[] = {
    acme_faultguard_impl_init_post_opt, acme_faultguard_impl_task_init, acme_faultguard_impl_task_exit};
[[maybe_unused]] static acme_faultguard_job_script_fn* const kJobScript[] = {acme_faultguard_impl_job_prolog,
                                                                               acme_faultguard_impl_job_epilog};
