// faultguard.so: how every job ended, and why it failed. Thin by design:
//  - slurmstepd (remote), task_exit: append the task's raw wait status to a per-job hand-off
//    file in the root-owned spool (one short write; no SQLite, no parsing in slurmstepd);
//  - job epilog (root, once per node): run acme-faultguard-epilog, bounded in time, which
//    records the exits, reads the log tail as the job's user, diagnoses and stores the result.
// Every callback catches everything and fails open: a job never fails because of faultguard.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "common/slurm/job_type.hpp"
#include "spank/faultguard/core/epilog_args.hpp"
#include "spank/faultguard/core/faultguard_config.hpp"
#include "spank/faultguard/core/faultguard_options.hpp"
#include "spank/faultguard/core/faultguard_paths.hpp"
#include "spank/faultguard/core/recovery_options.hpp"
#include "spank/faultguard/core/task_exit_log.hpp"
#include "common/util/parse.hpp"
#include "common/util/spawn.hpp"
#include "spank/option_env.hpp"
#include "spank/spank_abi.hpp"

extern "C" {
ACME_SPANK_EXPORT extern const char plugin_name[] = "faultguard";
ACME_SPANK_EXPORT extern const char plugin_type[] = "spank";
ACME_SPANK_EXPORT extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
ACME_SPANK_EXPORT extern const unsigned int spank_plugin_version = 1;
}

namespace {

using acme::spank::getenv_str;
using acme::spank::guarded;
using acme::spank::plain_node_name;
using acme::spank::plugstack_args;
using namespace acme::faultguard;

constexpr const char* kPlugin = "faultguard";
// Set by the first callback of this process that logs the build line.
std::atomic<bool> g_build_logged{false};

int on_job_type(int, const char* optarg, int remote);
int on_auto_recover(int, const char* optarg, int remote);
int on_ckpt_dir(int, const char* optarg, int remote);

// spank_option's members are char*: storage that outlives the registration.
char opt_name[] = "llm-job-type";
char opt_arginfo[] = "TYPE";
char opt_usage[] =
    "[faultguard] what this job is, for reports: pretrain, sft, eval, debug, mllm or other (default: from the "
    "job comment's llm-job-type=TYPE, else guessed from the job name)";
struct spank_option g_job_type = {opt_name, opt_arginfo, opt_usage, 1, 0, on_job_type};
char ar_name[] = "auto-recover";
char ar_arginfo[] = "MAX_RESTARTS";
char ar_usage[] =
    "[faultguard] on an infrastructure failure drain the faulty node and requeue this job, at most MAX_RESTARTS "
    "times (default 3). Env: ACME_AUTO_RECOVER";
struct spank_option g_auto_recover = {ar_name, ar_arginfo, ar_usage, 2, 0, on_auto_recover};
char ck_name[] = "ckpt-dir";
char ck_arginfo[] = "PATH";
char ck_usage[] =
    "[faultguard] the job's checkpoint directory: every start gets ACME_RESUME_CKPT (the newest complete checkpoint, "
    "empty on a fresh start) and ACME_RESTART_COUNT. Env: ACME_CKPT_DIR";
struct spank_option g_ckpt_dir = {ck_name, ck_arginfo, ck_usage, 1, 0, on_ckpt_dir};

// Environment forms: made aliases of Slurm's own, so Slurm validates them through the option
// callbacks (a bad value refuses the submission) and carries them like the flags.
struct EnvAlias {
    const char* ours;
    std::string_view option;
};
constexpr EnvAlias kEnvAliases[] = {
    {"ACME_AUTO_RECOVER", kAutoRecoverOption},
    {"ACME_CKPT_DIR", kCkptDirOption},
};

// Set by the option callbacks in slurmstepd (remote), read in init_post_opt.
std::string g_remote_ckpt_dir;
bool g_remote_recover = false;

int on_job_type(int, const char* optarg, int remote) {
    return guarded(kPlugin, "--llm-job-type", remote ? 0 : -1, [&] {
        if (remote || acme::acct::parse_job_type(optarg ? optarg : "")) return 0;
        slurm_error("faultguard: --llm-job-type=%s: want one of pretrain, sft, eval, debug, mllm, other",
                    acme::util::printable(optarg ? optarg : "", 40).c_str());
        return -1;
    });
}

int on_auto_recover(int, const char* optarg, int remote) {
    return guarded(kPlugin, "--auto-recover", remote ? 0 : -1, [&] {
        std::string error;
        const auto n = parse_auto_recover(optarg ? optarg : "", error);
        if (remote) {
            g_remote_recover = n.has_value();
            return 0;
        }
        if (!n) slurm_error("%s", error.c_str());
        return n ? 0 : -1;
    });
}

int on_ckpt_dir(int, const char* optarg, int remote) {
    return guarded(kPlugin, "--ckpt-dir", remote ? 0 : -1, [&] {
        const std::string value = optarg ? optarg : "";
        if (remote) {
            g_remote_ckpt_dir = value;
            return 0;
        }
        // sbatch runs as the user: checking the directory here uses the user's own rights.
        std::string error;
        if (!check_ckpt_dir(value, error)) {
            slurm_error("%s", error.c_str());
            return -1;
        }
        return 0;
    });
}

// Every caller runs as root (slurmstepd, job_script), where an admin reads the log: a bad
// plugstack argument is said wherever it is parsed, never dropped.
Config load_config(int ac, char** av) {
    auto [config, errors] =
        parse_plugstack_args(plugstack_args(ac, av),
                             {ACME_CONF_DIR "/rules.d", ACME_HELPER_DIR "/acme-faultguard-epilog", ACME_STATE_DIR "/labels.db",
                              ACME_HELPER_DIR "/acme-ckpt-find", ACME_CONF_DIR "/checkpoints.toml",
                              ACME_HELPER_DIR "/acme-health-gate"});
    for (const auto& e : errors) slurm_error("%s", e.c_str());
    return config;
}

// --auto-recover's restart cap in job_script context; -1 when the job did not ask.
int auto_recover_option(spank_t sp) {
    char* optarg = nullptr;
    if (spank_option_getopt(sp, &g_auto_recover, &optarg) != ESPANK_SUCCESS) return -1;
    std::string error;
    return parse_auto_recover(optarg ? optarg : "", error).value_or(-1);
}

// In slurmstepd, for every task of a job that asked for recovery: ACME_RESTART_COUNT. Slurm
// adds SLURM_RESTART_COUNT to a requeued job's environment only after init_post_opt, so this
// runs in task_init, just before the task starts.
int set_restart_env(spank_t sp) {
    if (g_remote_ckpt_dir.empty() && !g_remote_recover) return 0;
    uint32_t restarts = 0;
    spank_get_item(sp, S_SLURM_RESTART_COUNT, &restarts);
    char buf[32] = {};
    if (spank_getenv(sp, "SLURM_RESTART_COUNT", buf, sizeof buf) == ESPANK_SUCCESS)
        if (const auto n = acme::util::parse_int(buf); n && *n > static_cast<long long>(restarts))
            restarts = static_cast<uint32_t>(*n);
    spank_setenv(sp, "ACME_RESTART_COUNT", std::to_string(restarts).c_str(), 1);
    return 0;
}

// In slurmstepd, for every step of a job that gave --ckpt-dir: the newest complete checkpoint
// into the job's environment. The directory is read by a helper
// that becomes the job's user first, bounded in time.
int set_resume_env(spank_t sp, int ac, char** av) {
    if (g_remote_ckpt_dir.empty()) return 0;
    const auto config = load_config(ac, av);
    uid_t uid = 0;
    gid_t gid = 0;
    uint32_t job_id = 0;
    spank_get_item(sp, S_JOB_UID, &uid);
    spank_get_item(sp, S_JOB_GID, &gid);
    spank_get_item(sp, S_JOB_ID, &job_id);
    const auto r = acme::util::run_bounded({config.ckpt_finder, "--dir", g_remote_ckpt_dir, "--rules",
                                            config.ckpt_rules, "--uid", std::to_string(uid), "--gid",
                                            std::to_string(gid)},
                                           {"PATH=/usr/bin:/bin"}, "", config.ckpt_timeout);
    std::string path;
    if (r.started && !r.timed_out && WIFEXITED(r.wait_status) && WEXITSTATUS(r.wait_status) == 0) {
        path = r.output.substr(0, r.output.find('\t'));
    } else {
        const std::string why = r.timed_out ? fmt::format("took over {} s", config.ckpt_timeout) : r.output;
        slurm_error("%s: job %u: cannot look for checkpoints in %s: %s", kPlugin, job_id, g_remote_ckpt_dir.c_str(),
                    why.c_str());
        // Say so in the job's environment: starting over silently would throw away days of work.
        spank_setenv(sp, "ACME_RESUME_ERROR", why.c_str(), 1);
    }
    spank_setenv(sp, "ACME_RESUME_CKPT", path.c_str(), 1);
    return 0;
}

// The --llm-job-type value in job_script context (only spank_option_getopt sees it there).
std::string job_type_option(spank_t sp) {
    char* optarg = nullptr;
    if (spank_option_getopt(sp, &g_job_type, &optarg) != ESPANK_SUCCESS || !optarg) return {};
    return acme::acct::parse_job_type(optarg) ? std::string(optarg) : std::string();
}

int task_exit(spank_t sp, int ac, char** av) {
    uint32_t job_id = 0, step_id = 0, task_id = 0;
    int status = 0;
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_STEPID, &step_id) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_TASK_GLOBAL_ID, &task_id) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_TASK_EXIT_STATUS, &status) != ESPANK_SUCCESS)
        return 0;
    char node[256] = {};
    if (spank_getenv(sp, "SLURMD_NODENAME", node, sizeof node) != ESPANK_SUCCESS || !plain_node_name(node)) return 0;
    const auto config = load_config(ac, av);
    mkdir(config.spool.c_str(), 0755);
    mkdir(run_dir(config.spool).c_str(), 0755);
    const double ts =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    const std::string line = format_task_exit({step_id, task_id, status, ts});
    const std::string path = task_exit_path(config.spool, node, job_id);
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0640);
    if (fd < 0) {
        slurm_error("%s: job %u: cannot record task %u's exit in %s", kPlugin, job_id, task_id, path.c_str());
        return 0;
    }
    if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
        slurm_error("%s: job %u: short write to %s", kPlugin, job_id, path.c_str());
    ::close(fd);
    return 0;
}

// The pre-job health gate: bounded, and a gate that cannot run lets the job through.
int job_prolog(spank_t sp, int ac, char** av) {
    const auto config = load_config(ac, av);
    const std::string gpus = getenv_str("SLURM_JOB_GPUS");
    if (!config.health_gate || gpus.empty()) return 0;
    uint32_t job_id = 0;
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) return 0;
    const std::string node = getenv_str("SLURMD_NODENAME");
    if (!plain_node_name(node)) return 0;
    std::vector<std::string> env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "SLURMD_NODENAME=" + node};
    if (const auto conf = getenv_str("SLURM_CONF"); !conf.empty()) env.push_back("SLURM_CONF=" + conf);
    mkdir(config.spool.c_str(), 0755);
    const auto r = acme::util::run_bounded({config.gate_helper, "--node", node, "--job", std::to_string(job_id), "--gpus",
                                            gpus, "--spool", config.spool, "--nvml", config.nvml},
                                           env, log_path(config.spool, node),
                                           config.gate_timeout);
    if (!r.started)
        slurm_error("%s: job %u: cannot run the health gate %s: %s", kPlugin, job_id, config.gate_helper.c_str(),
                    r.output.c_str());
    else if (r.timed_out)
        slurm_error("%s: job %u: the health gate took over %g s and was stopped; letting the job run", kPlugin, job_id,
                    config.gate_timeout);
    else if (WIFEXITED(r.wait_status) && WEXITSTATUS(r.wait_status) == 1)
        slurm_error("%s: %s", kPlugin, r.output.c_str());
    else
        slurm_info("%s: %s", kPlugin, r.output.c_str());
    return 0;
}

int job_epilog(spank_t sp, int ac, char** av) {
    const auto config = load_config(ac, av);
    uint32_t job_id = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) return 0;
    spank_get_item(sp, S_JOB_UID, &uid);
    spank_get_item(sp, S_JOB_GID, &gid);
    const std::string node = getenv_str("SLURMD_NODENAME");
    if (!plain_node_name(node)) return 0;

    EpilogArgs a;
    a.job = job_id;
    a.node = node;
    a.spool = config.spool;
    a.rules = config.rules;
    a.labels = config.labels;
    a.uid = uid;
    a.gid = gid;
    a.restart = acme::util::parse_int(getenv_str("SLURM_JOB_RESTART_COUNT")).value_or(0);
    a.exit_code2 = getenv_str("SLURM_JOB_EXIT_CODE2");
    a.gpus = getenv_str("SLURM_JOB_GPUS");
    a.nodelist = getenv_str("SLURM_NODELIST");
    a.work_dir = getenv_str("SLURM_JOB_WORK_DIR");
    a.stdout_pattern = getenv_str("SLURM_JOB_STDOUT");
    a.stderr_pattern = getenv_str("SLURM_JOB_STDERR");
    a.user = getenv_str("SLURM_JOB_USER");
    a.log_bytes = config.log_bytes;
    a.read_timeout = config.timeout / 4;
    a.job_type = job_type_option(sp);
    a.auto_recover = auto_recover_option(sp);
    a.gpucheck = config.gpucheck;
    a.admin_comment = config.admin_comment;
    const auto argv = epilog_argv(config.helper, a);
    // Only what the helper needs: libslurm finds slurmctld through SLURM_CONF.
    std::vector<std::string> env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
    if (const auto conf = getenv_str("SLURM_CONF"); !conf.empty()) env.push_back("SLURM_CONF=" + conf);
    mkdir(config.spool.c_str(), 0755);
    const auto r = acme::util::run_bounded(argv, env, log_path(config.spool, node),
                                           config.timeout);
    if (!r.started)
        slurm_error("%s: job %u: cannot run %s: %s", kPlugin, job_id, config.helper.c_str(), r.output.c_str());
    else if (r.timed_out)
        slurm_error("%s: job %u: diagnosis did not finish within %g s and was stopped", kPlugin, job_id, config.timeout);
    else
        slurm_info("%s: %s", kPlugin, r.output.c_str());
    return 0;
}

}  // namespace

extern "C" {

// init, job_prolog and job_epilog each open the callbacks of some process (slurmstepd, the
// job_script processes): each logs the build line before anything else; on a user's terminal
// init_post_opt does, once -v is known.
ACME_SPANK_EXPORT int slurm_spank_init(spank_t sp, int, char**) noexcept {
    acme::spank::log_build_once(kPlugin, g_build_logged, false);
    return guarded(kPlugin, "init", 0, [&] {
        const spank_context_t ctx = spank_context();
        if (ctx != S_CTX_ALLOCATOR && ctx != S_CTX_LOCAL && ctx != S_CTX_REMOTE) return 0;
        for (auto* opt : {&g_job_type, &g_auto_recover, &g_ckpt_dir})
            if (spank_option_register(sp, opt) != ESPANK_SUCCESS)
                slurm_error("%s: cannot register --%s in %s context", kPlugin, opt->name, acme::spank::context_name(ctx));
        if (ctx != S_CTX_REMOTE)
            for (const auto& alias : kEnvAliases)
                if (const char* v = getenv(alias.ours); v && *v)
                    setenv(acme::spank::submit_option_env(kPlugin, alias.option).c_str(), v, 0);
        return 0;
    });
}

ACME_SPANK_EXPORT int slurm_spank_init_post_opt(spank_t sp, int ac, char** av) noexcept {
    acme::spank::log_build_once(kPlugin, g_build_logged, true);
    return guarded(kPlugin, "init_post_opt", 0, [&] { return spank_remote(sp) ? set_resume_env(sp, ac, av) : 0; });
}

ACME_SPANK_EXPORT int slurm_spank_task_init(spank_t sp, int, char**) noexcept {
    return guarded(kPlugin, "task_init", 0, [&] { return set_restart_env(sp); });
}

ACME_SPANK_EXPORT int slurm_spank_job_prolog(spank_t sp, int ac, char** av) noexcept {
    acme::spank::log_build_once(kPlugin, g_build_logged, false);
    return guarded(kPlugin, "job_prolog", 0, [&] { return job_prolog(sp, ac, av); });
}

ACME_SPANK_EXPORT int slurm_spank_task_exit(spank_t sp, int ac, char** av) noexcept {
    return guarded(kPlugin, "task_exit", 0, [&] { return spank_remote(sp) ? task_exit(sp, ac, av) : 0; });
}

ACME_SPANK_EXPORT int slurm_spank_job_epilog(spank_t sp, int ac, char** av) noexcept {
    acme::spank::log_build_once(kPlugin, g_build_logged, false);
    return guarded(kPlugin, "job_epilog", 0, [&] { return job_epilog(sp, ac, av); });
}

}  // extern "C"
