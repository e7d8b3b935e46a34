// gputrace_impl.so's side of the option: the shim (shim.c) registers --gpu-telemetry in every
// context and calls validate_option on the submit side (sbatch/srun/salloc, as the user: a bad
// value refuses the submission); the job prolog reads the value back; and the plugstack
// arguments.
#include <cstdlib>
#include <optional>
#include <string>

#include "spank/faultguard_options.hpp"
#include "spank/gputrace/plugin.hpp"

namespace acme::telemetry::plugin {
namespace {

using acme::spank::plugstack_args;

constexpr const char* kEnvVar = "ACME_GPU_TELEMETRY";

// The option as spank_option_getopt finds it in job_script context (by its name, from the
// job's environment); the shim registers the same name with its usage and callback.
char opt_name[] = "gpu-telemetry";
struct spank_option g_option = {opt_name, nullptr, nullptr, 2, 0, nullptr};

}  // namespace

// The flag or its environment forms reach job_script context only through spank_option_getopt.
TelemetryRequest job_request(spank_t sp, const GputraceConfig& config) {
    std::optional<TelemetryRequest> from_flag;
    char* optarg = nullptr;
    if (spank_option_getopt(sp, &g_option, &optarg) == ESPANK_SUCCESS) {
        std::string error;
        from_flag = parse_telemetry_value(optarg ? optarg : "", config, "--gpu-telemetry", error);
        // Validated at submission; a value refused now means the admin tightened the bounds since.
        if (!from_flag) slurm_error("%s; tracing with the cluster's interval", error.c_str());
        if (!from_flag) from_flag = TelemetryRequest{true, std::nullopt};
    }
    // A job that asked faultguard for recovery needs its GPU events to find the faulty node:
    // trace it (at the cluster's interval) unless it said --gpu-telemetry=off.
    if (!from_flag && acme::faultguard::job_asked_auto_recover())
        from_flag = TelemetryRequest{true, std::nullopt};
    return effective_request(from_flag, std::nullopt, config);
}

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
