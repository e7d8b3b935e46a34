// gputrace_impl.so: gputrace's C++ side, loaded by the shim gputrace.so (shim.c) only where a
// job needs it (spank/shim.h). This file only exports the entry points impl_abi.h names:
//  - args.cpp (sbatch/srun/salloc): a --gpu-telemetry value is validated;
//  - job_script.cpp (slurmd's epilog, root, once per node): stop the job's sampler and wait a
//    bounded time for its last flush. The shim starts the sampler itself (#41).
// The shim logs the build line and does what every job needs itself. Every entry point fails
// open: telemetry trouble is logged, never the job's problem.
#include "spank/gputrace/plugin.hpp"
#include "spank/impl_abi.h"
#include "spank/spank_abi.hpp"

using acme::spank::guarded;
using namespace acme::telemetry::plugin;

extern "C" {

ACME_SPANK_EXPORT int acme_gputrace_impl_validate(int ac, char** av, const char* optarg) noexcept {
    return guarded(kPlugin, "--gpu-telemetry", -1, [&] { return validate_option(ac, av, optarg); });
}

ACME_SPANK_EXPORT int acme_gputrace_impl_job_epilog(spank_t sp, int ac, char** av) noexcept {
    return guarded(kPlugin, "job_epilog", 0, [&] { return job_script_epilog(sp, ac, av); });
}

}  // extern "C"

// The shim looks these up by name: a typo here would be a silent "has no" line on every node.
[[maybe_unused]] static acme_gputrace_validate_fn* const kValidate = acme_gputrace_impl_validate;
[[maybe_unused]] static acme_gputrace_job_script_fn* const kEpilog = acme_gputrace_impl_job_epilog;
