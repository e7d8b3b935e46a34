// acme-gpu-sampler-start's two pure steps (gputrace(8), "The job prolog"): the command line the
// job prolog's C shim hands it, read strictly, and the sampler's command line built from it and
// the plugstack arguments. The shim runs as root inside `slurmstepd spank prolog` and passes
// nothing of the job's environment but these values: every one is checked here before it reaches
// the root sampler.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spank/gputrace/core/gputrace_config.hpp"

namespace acme::telemetry {

// What the job prolog read from Slurm (spank items and the prolog's environment).
struct SamplerStartArgs {
    long long job = 0;
    long long uid = -1;
    long long gid = -1;
    std::string node;                      // SLURMD_NODENAME
    std::string gpus;                      // SLURM_JOB_GPUS
    std::optional<std::string> telemetry;  // the --gpu-telemetry value when given ("": the bare flag)
    bool auto_recover = false;             // faultguard's --auto-recover given
    std::string ckpt_dir;                  // faultguard's --ckpt-dir ("" when not given)
    long long restart = 0;                 // SLURM_JOB_RESTART_COUNT
    std::string sluid;                     // SLURM_JOB_SLUID (Slurm 26.05+)
    std::string slurm_conf;                // SLURM_CONF of the prolog (slurmd's), for libslurm
    std::vector<std::string> plugstack;    // gputrace's plugstack.conf words, as Slurm split them
};

// Reads the words after argv[0]: "--KEY VALUE" pairs only (so a value is never taken for a key),
// each key at most once except --arg. nullopt with `error` (one line naming the key) on anything
// else: an unknown key, a missing value, a value out of its form.
std::optional<SamplerStartArgs> parse_sampler_start_args(const std::vector<std::string_view>& words,
                                                         std::string& error);

// The shim's side of the same command line is sampler_spawn_c.h's acme_sampler_start_argv (the
// unit tests hold both to each other).

struct SamplerLaunch {
    std::vector<std::string> argv;  // argv[0]: the sampler (plugstack sampler=)
    std::vector<std::string> env;   // exactly what the sampler gets
    double interval = 0;
};

// The request in force (job_request's rules: the flag's value, off included; else a job that
// asked faultguard for recovery; else the admin's default=) and, when it is on, the sampler's
// command line. nullopt: not traced. `notes` gets a line for a value the admin's bounds refuse
// now (it was validated at submission: traced at the cluster's interval).
std::optional<SamplerLaunch> sampler_launch(const SamplerStartArgs& a, const GputraceConfig& config,
                                            std::vector<std::string>& notes);

}  // namespace acme::telemetry
