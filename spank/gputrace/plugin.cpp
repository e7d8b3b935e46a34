// gputrace.so: GPU telemetry for every job that asks (--gpu-telemetry) or, with default=on,
// every GPU job. Thin by design: sbatch/salloc/srun only validate the flag; the job prolog
// (root, job_script context, once per node) starts one detached acme-gpu-sampler per job; the
// job epilog stops it and waits a bounded time for its last flush. Nothing runs in slurmstepd
// or slurmd. Every callback fails open: telemetry trouble is logged, never the job's problem.
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "spank/faultguard/core/faultguard_options.hpp"
#include "spank/gputrace/core/gputrace_config.hpp"
#include "spank/gputrace/core/sampler_control.hpp"
#include "spank/gputrace/core/sampler_paths.hpp"
#include "common/util/spawn.hpp"
#include "spank/option_env.hpp"
#include "spank/spank_abi.hpp"

extern "C" {
ACME_SPANK_EXPORT extern const char plugin_name[] = "gputrace";
ACME_SPANK_EXPORT extern const char plugin_type[] = "spank";
ACME_SPANK_EXPORT extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
ACME_SPANK_EXPORT extern const unsigned int spank_plugin_version = 1;
}

namespace {

using acme::spank::getenv_str;
using acme::spank::guarded;
using acme::spank::plain_node_name;
using acme::spank::plugstack_args;
using namespace acme::telemetry;

constexpr const char* kPlugin = "gputrace";
// Set by the first callback of this process that logs the build line.
std::atomic<bool> g_build_logged{false};
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

ConfigResult load_config(int ac, char** av) {
    return parse_plugstack_args(plugstack_args(ac, av), ACME_HELPER_DIR "/acme-gpu-sampler");
}

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

// The request in force in the job prolog: the flag or its environment forms (through
// spank_option_getopt, the only way options reach job_script context), else the admin default.
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

int job_prolog(spank_t sp, int ac, char** av) {
    const auto [config, errors] = load_config(ac, av);
    for (const auto& e : errors) slurm_error("%s", e.c_str());
    const auto request = job_request(sp, config);
    const std::string gpus = getenv_str("SLURM_JOB_GPUS");
    if (!request.enabled || gpus.empty()) return 0;

    uint32_t job_id = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) {
        slurm_error("%s: job prolog: no job id; not tracing", kPlugin);
        return 0;
    }
    spank_get_item(sp, S_JOB_UID, &uid);
    spank_get_item(sp, S_JOB_GID, &gid);
    const std::string node = getenv_str("SLURMD_NODENAME");
    if (!plain_node_name(node)) {
        slurm_error("%s: job %u: SLURMD_NODENAME is not usable; not tracing", kPlugin, job_id);
        return 0;
    }
    const double interval = request.interval.value_or(config.interval);
    std::vector<std::string> argv = {
        config.sampler,
        "--job", std::to_string(job_id),
        "--node", node,
        "--gpus", gpus,
        "--interval", fmt::format("{}", interval),
        "--spool", config.spool,
        "--nvml", config.nvml,
        "--uid", std::to_string(uid),
        "--gid", std::to_string(gid),
        "--watch-interval", fmt::format("{}", config.watch_interval),
        "--call-timeout", fmt::format("{}", config.call_timeout),
    };
    // Only what the sampler needs: libslurm finds slurmctld through SLURM_CONF, and nothing of
    // the job's (user-influenced) environment reaches a root process.
    std::vector<std::string> env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "SLURMD_NODENAME=" + node};
    if (const auto conf = getenv_str("SLURM_CONF"); !conf.empty()) env.push_back("SLURM_CONF=" + conf);
    std::string error;
    if (!acme::util::spawn_detached(argv, env, sampler_logfile(config.spool, node), error)) {
        slurm_error("%s: job %u: cannot start the sampler: %s", kPlugin, job_id, error.c_str());
        return 0;
    }
    slurm_info("%s: job %u: sampling GPUs %s every %g s", kPlugin, job_id, gpus.c_str(), interval);
    return 0;
}

int job_epilog(spank_t sp, int ac, char** av) {
    const auto [config, errors] = load_config(ac, av);
    for (const auto& e : errors) slurm_error("%s", e.c_str());
    uint32_t job_id = 0;
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) return 0;
    const std::string node = getenv_str("SLURMD_NODENAME");
    if (!plain_node_name(node)) return 0;
    const auto pidfile = sampler_pidfile(config.spool, node, job_id);
    if (access(pidfile.c_str(), F_OK) != 0) return 0;
    if (stop_sampler(pidfile, job_id, config.stop_timeout) == StopResult::killed)
        slurm_error("%s: job %u: the sampler did not finish within %g s and was killed; its last samples are lost",
                    kPlugin, job_id, config.stop_timeout);
    return 0;
}

}  // namespace

extern "C" {

// init, job_prolog and job_epilog each open the callbacks of some process (slurmstepd, the
// job_script processes): each logs the build line before anything else; on a user's terminal
// init_post_opt does, once -v is known.
ACME_SPANK_EXPORT int slurm_spank_init(spank_t sp, int ac, char** av) noexcept {
    acme::spank::log_build_once(kPlugin, g_build_logged, false);
    return guarded(kPlugin, "init", 0, [&] {
        const spank_context_t ctx = spank_context();
        if (ctx != S_CTX_ALLOCATOR && ctx != S_CTX_LOCAL && ctx != S_CTX_REMOTE) return 0;
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
    });
}

ACME_SPANK_EXPORT int slurm_spank_init_post_opt(spank_t, int, char**) noexcept {
    acme::spank::log_build_once(kPlugin, g_build_logged, true);
    return 0;
}

ACME_SPANK_EXPORT int slurm_spank_job_prolog(spank_t sp, int ac, char** av) noexcept {
    acme::spank::log_build_once(kPlugin, g_build_logged, false);
    return guarded(kPlugin, "job_prolog", 0, [&] { return job_prolog(sp, ac, av); });
}

ACME_SPANK_EXPORT int slurm_spank_job_epilog(spank_t sp, int ac, char** av) noexcept {
    acme::spank::log_build_once(kPlugin, g_build_logged, false);
    return guarded(kPlugin, "job_epilog", 0, [&] { return job_epilog(sp, ac, av); });
}

}  // extern "C"
