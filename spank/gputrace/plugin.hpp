// gputrace.so's insides, one file per context (pyxis's shape): plugin.cpp only dispatches on
// spank_context(). Every function here runs inside guarded(), so it may throw; each fails open.
#pragma once

#include "spank/gputrace/core/gputrace_config.hpp"
#include "spank/spank_abi.hpp"

namespace acme::telemetry::plugin {

inline constexpr const char* kPlugin = "gputrace";

// args.cpp: the option in sbatch/srun/salloc and slurmstepd (registration, validation).
int init_options(spank_t sp, int ac, char** av);
ConfigResult load_config(int ac, char** av);
// job_script context: the request in force, from the flag, its environment forms, a job that
// asked faultguard for recovery, else the admin's default.
TelemetryRequest job_request(spank_t sp, const GputraceConfig& config);

// args.cpp, slurmstepd's task_init: ACME_HEARTBEAT_FILE (stall.hpp's heartbeat_path) for
// every task when stall detection is on; one setenv, nothing else.
int export_heartbeat(spank_t sp);

// job_script.cpp: slurmd's prolog and epilog.
int job_script_prolog(spank_t sp, int ac, char** av);
int job_script_epilog(spank_t sp, int ac, char** av);

}  // namespace acme::telemetry::plugin
