// gputrace's two inputs: the admin's plugstack.conf arguments and the user's
// --gpu-telemetry[=SECONDS|off] value (or ACME_GPU_TELEMETRY). Pure, so it is unit-tested and
// fuzzed without Slurm; errors are one line that names the flag or key.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/install_paths.hpp"
#include "spank/gputrace/core/idle.hpp"
#include "spank/gputrace/core/stall.hpp"

namespace acme::telemetry {

struct GputraceConfig {
    bool default_on = false;           // trace GPU jobs that did not ask
    double interval = 10.0;            // seconds between samples when the user gives none
    double min_interval = 1.0;         // the shortest interval a user may ask for
    double max_interval = 3600.0;      // the longest
    std::string spool{paths::kSpoolDir};
    std::string nvml = "libnvidia-ml.so.1";
    std::string sampler;               // path of acme-gpu-sampler; the build's libexec by default
    double stop_timeout = 10.0;        // seconds the epilog waits for the sampler's final flush
    // seconds the sampler waits at most for the job's first step before its own start (0: none)
    double start_wait = 1.0;
    double watch_interval = 10.0;      // seconds between the sampler's "is my job still there"
    double call_timeout = 10.0;        // seconds one NVML call may take before the sampler gives up
    // node_exporter's textfile-collector directory for the job's Prometheus series ("%n": the
    // Slurm node name); empty: none written.
    std::string textfile_dir;
    // hpc_job and user on every GPU series too, not only on acme_job_gpu_info (textfile.hpp).
    bool textfile_job_labels = false;
    StallConfig stall;                 // stall detection (stall.hpp, gputrace(8): stall_* keys)
    IdleConfig idle;                   // held-but-idle GPUs (idle.hpp, gputrace(8): idle_* keys)
};

struct ConfigResult {
    GputraceConfig config;
    std::vector<std::string> errors;   // one line each; the plugin logs them and stays harmless
};

// Parses plugstack.conf arguments ("key=value" words). Unknown keys and bad values are errors;
// the setting they named keeps its default.
ConfigResult parse_plugstack_args(const std::vector<std::string_view>& args, std::string_view default_sampler);

// What the user asked for.
struct TelemetryRequest {
    bool enabled = false;
    std::optional<double> interval;    // unset: the admin's interval
};

// Parses an --gpu-telemetry value. `value` is empty when the flag was given without "=".
// On error returns nullopt and sets `error` to a line that names the flag and what is allowed.
std::optional<TelemetryRequest> parse_telemetry_value(std::string_view value, const GputraceConfig& config,
                                                      std::string_view source, std::string& error);

// The request in force for a job: the flag, else ACME_GPU_TELEMETRY, else the admin default.
TelemetryRequest effective_request(const std::optional<TelemetryRequest>& from_flag,
                                   const std::optional<TelemetryRequest>& from_env, const GputraceConfig& config);

}  // namespace acme::telemetry
