// gputrace_impl.so's side of the option: the shim (shim.c) registers --gpu-telemetry in every
// context and calls validate_option on the submit side (sbatch/srun/salloc, as the user: a bad
// value refuses the submission); the job prolog's shim reads the value back (shim.c) and
// acme-gpu-sampler-start decides it (sampler_start.hpp); and the plugstack arguments.
#include <cstdlib>
#include <string>

#include "spank/gputrace/plugin.hpp"

namespace acme::telemetry::plugin {
namespace {

using acme::spank::plugstack_args;

constexpr const char* kEnvVar = "ACME_GPU_TELEMETRY";

}  // namespace

ConfigResult load_config(int ac, char** av) {
    return parse_plugstack_args(plugstack_args(ac, av), ACME_HELPER_DIR "/acme-gpu-sampler");
}

// Slurm calls option callbacks more than once (environment, then command line); validation is
// pure, so repeats are harmless. The value itself reaches the job prolog through
// spank_option_getopt.
int validate_option(int ac, char** av, const char* optarg) {
    const auto config = load_config(ac, av).config;
    const std::string value = optarg ? optarg : "";
    std::string error;
    const char* env = getenv(kEnvVar);
    const char* source = env && value == env ? kEnvVar : "--gpu-telemetry";
    if (!parse_telemetry_value(value, config, source, error)) {
        slurm_error("%s", error.c_str());
        return -1;
    }
    return 0;
}

}  // namespace acme::telemetry::plugin
