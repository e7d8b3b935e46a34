// gputrace.so's option (pyxis's args.c): --gpu-telemetry, registered in every context,
// validated on the submit side (sbatch/srun/salloc, as the user: a bad value refuses the
// submission), read back in job_script context; and the plugstack arguments.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "spank/faultguard_options.hpp"
#include "spank/gputrace/core/heartbeat_dir.hpp"
#include "spank/gputrace/plugin.hpp"
#include "spank/option_env.hpp"

namespace acme::telemetry::plugin {
namespace {

using acme::spank::guarded;
using acme::spank::plugstack_args;

constexpr const char* kEnvVar = "ACME_GPU_TELEMETRY";

// Per process: sbatch/srun parse the plugstack arguments once in init; job_script processes
// parse them in each callback (init is not called there).
GputraceConfig g_config;

int on_option(int, const char* optarg, int remote);

// spank_option's members are char*: give them storage that outlives the registration.
char opt_name[] = "gpu-telemetry";
char opt_arginfo[] = "SECONDS|off";
char opt_usage[] =
    "[gputrace] sample this job's GPUs every SECONDS (default: the cluster's interval) into the node's telemetry "
    "spool; off disables it. Env: ACME_GPU_TELEMETRY";
struct spank_option g_option = {opt_name, opt_arginfo, opt_usage, 2, 0, on_option};

int on_option(int, const char* optarg, int remote) {
    return guarded(kPlugin, "--gpu-telemetry", remote ? 0 : -1, [&] {
        // Slurm calls option callbacks more than once (environment, then command line) and
        // again in slurmstepd; validation is pure, so repeats are harmless. The value itself
        // reaches the job prolog through spank_option_getopt.
        if (remote) return 0;
        const std::string value = optarg ? optarg : "";
        std::string error;
        const char* env = getenv(kEnvVar);
        const char* source = env && value == env ? kEnvVar : "--gpu-telemetry";
        if (!parse_telemetry_value(value, g_config, source, error)) {
            slurm_error("%s", error.c_str());
            return -1;
        }
        return 0;
    });
}

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

int export_heartbeat(spank_t sp) {
    if (!g_config.stall.enabled) return 0;
    uint32_t job_id = 0;
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) return 0;
    char node[256] = {};
    if (spank_getenv(sp, "SLURMD_NODENAME", node, sizeof node) != ESPANK_SUCCESS || !acme::spank::plain_node_name(node))
        return 0;
    // task_init runs as the job's user: the directory the prolog made private to them is there
    // and theirs, else the job gets no variable (a trainer's touch must never fail on it).
    struct stat st {};
    const auto dir = heartbeat_job_dir(g_config.stall.heartbeat_dir, job_id);
    if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) return 0;
    spank_setenv(sp, "ACME_HEARTBEAT_FILE", heartbeat_path(g_config.stall, job_id, node).c_str(), 1);
    return 0;
}

ConfigResult load_config(int ac, char** av) {
    return parse_plugstack_args(plugstack_args(ac, av), ACME_HELPER_DIR "/acme-gpu-sampler");
}

int init_options(spank_t sp, int ac, char** av) {
    const spank_context_t ctx = spank_context();
    auto [config, errors] = load_config(ac, av);
    g_config = config;
    // Admin mistakes belong in slurmstepd's log, not on every user's terminal.
    if (ctx == S_CTX_REMOTE)
        for (const auto& e : errors) slurm_error("%s", e.c_str());
    if (ctx != S_CTX_REMOTE) {
        const char* env = getenv(kEnvVar);
        // Made an alias of Slurm's own environment form of the option, so Slurm validates
        // it through on_option (a bad value refuses the submission) and carries it to the
        // job prolog exactly like the flag; a command-line flag still wins.
        if (env && *env) setenv(acme::spank::submit_option_env(kPlugin, "gpu-telemetry").c_str(), env, 0);
    }
    if (spank_option_register(sp, &g_option) != ESPANK_SUCCESS)
        slurm_error("%s: cannot register --gpu-telemetry in %s context", kPlugin, acme::spank::context_name(ctx));
    return 0;
}

}  // namespace acme::telemetry::plugin
