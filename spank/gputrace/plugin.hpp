// gputrace_impl.so's insides, one file per context (pyxis's shape): plugin.cpp only exports the
// entry points the shim (shim.c) calls. Every function here runs inside guarded(), so it may
// throw; each fails open.
#pragma once

#include "spank/gputrace/core/gputrace_config.hpp"
#include "spank/spank_abi.hpp"

namespace acme::telemetry::plugin {

inline constexpr const char* kPlugin = "gputrace";

// args.cpp: a --gpu-telemetry value in sbatch/srun/salloc (the shim registers the option):
// 0, or -1 after one error line, which refuses the submission.
int validate_option(int ac, char** av, const char* optarg);
ConfigResult load_config(int ac, char** av);

// job_script.cpp: slurmd's epilog (the prolog is the shim's: shim.c, sampler_start.hpp).
int job_script_epilog(spank_t sp, int ac, char** av);

}  // namespace acme::telemetry::plugin
