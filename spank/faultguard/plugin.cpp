// faultguard.so: how every job ended, and why it failed. Thin by design:
//  - slurmstepd (remote), task_exit: append the task's raw wait status to a per-job hand-off
//    file in the root-owned spool (one short write; no SQLite, no parsing in slurmstepd);
//  - job epilog (root, once per node): run acme-faultguard-epilog, bounded in time, which
//    records the exits, reads the log tail as the job's user, diagnoses and stores the result.
// Every callback catches everything and fails open: a job never fails because of faultguard.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "common/acct/job_type.hpp"
#include "common/faultguard/faultguard_config.hpp"
#include "common/faultguard/task_exit_log.hpp"
#include "common/util/parse.hpp"
#include "common/util/spawn.hpp"
#include "spank/spank_abi.hpp"

extern "C" {
ACME_SPANK_EXPORT extern const char plugin_name[] = "faultguard";
ACME_SPANK_EXPORT extern const char plugin_type[] = "spank";
ACME_SPANK_EXPORT extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
ACME_SPANK_EXPORT extern const unsigned int spank_plugin_version = 1;
}

namespace {

using acme::spank::guarded;
using namespace acme::faultguard;

constexpr const char* kPlugin = "faultguard";

#ifndef ACME_LIBEXECDIR
#define ACME_LIBEXECDIR "/usr/local/libexec/acme-slurm"
#endif
#ifndef ACME_LABELS_PATH
#define ACME_LABELS_PATH "/usr/local/var/lib/acme/labels.db"
#endif
#ifndef ACME_RULESDIR
#define ACME_RULESDIR "/usr/local/etc/slurm/acme/rules.d"
#endif

int on_job_type(int, const char* optarg, int remote);

// spank_option's members are char*: storage that outlives the registration.
char opt_name[] = "llm-job-type";
char opt_arginfo[] = "TYPE";
char opt_usage[] =
    "[faultguard] what this job is, for reports: pretrain, sft, eval, debug, mllm or other (default: from the "
    "job comment's llm-job-type=TYPE, else guessed from the job name)";
struct spank_option g_job_type = {opt_name, opt_arginfo, opt_usage, 1, 0, on_job_type};

int on_job_type(int, const char* optarg, int remote) {
    return guarded(kPlugin, "--llm-job-type", remote ? 0 : -1, [&] {
        if (remote || acme::acct::parse_job_type(optarg ? optarg : "")) return 0;
        slurm_error("faultguard: --llm-job-type=%s: want one of pretrain, sft, eval, debug, mllm, other",
                    acme::util::printable(optarg ? optarg : "", 40).c_str());
        return -1;
    });
}

ConfigResult load_config(int ac, char** av) {
    std::vector<std::string_view> args;
    for (int i = 0; i < ac; ++i) args.emplace_back(av[i]);
    return parse_plugstack_args(args, ACME_RULESDIR, ACME_LIBEXECDIR "/acme-faultguard-epilog", ACME_LABELS_PATH);
}

// The --llm-job-type value in job_script context (only spank_option_getopt sees it there).
std::string job_type_option(spank_t sp) {
    char* optarg = nullptr;
    if (spank_option_getopt(sp, &g_job_type, &optarg) != ESPANK_SUCCESS || !optarg) return {};
    return acme::acct::parse_job_type(optarg) ? std::string(optarg) : std::string();
}

std::string getenv_str(const char* name) {
    const char* v = getenv(name);
    return v ? v : "";
}

bool plain_node_name(const std::string& node) { return !node.empty() && node.find('/') == std::string::npos; }

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
    const auto config = load_config(ac, av).config;
    mkdir(config.spool.c_str(), 0755);
    mkdir((config.spool + "/run").c_str(), 0755);
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

int job_epilog(spank_t sp, int ac, char** av) {
    const auto [config, errors] = load_config(ac, av);
    for (const auto& e : errors) slurm_error("%s", e.c_str());
    uint32_t job_id = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) return 0;
    spank_get_item(sp, S_JOB_UID, &uid);
    spank_get_item(sp, S_JOB_GID, &gid);
    const std::string node = getenv_str("SLURMD_NODENAME");
    if (!plain_node_name(node)) return 0;

    std::vector<std::string> argv = {
        config.helper,
        "--job", std::to_string(job_id),
        "--node", node,
        "--spool", config.spool,
        "--rules", config.rules,
        "--labels", config.labels,
        "--uid", std::to_string(uid),
        "--gid", std::to_string(gid),
        "--restart", getenv_str("SLURM_JOB_RESTART_COUNT").empty() ? "0" : getenv_str("SLURM_JOB_RESTART_COUNT"),
        "--exit-code2", getenv_str("SLURM_JOB_EXIT_CODE2"),
        "--gpus", getenv_str("SLURM_JOB_GPUS"),
        "--nodelist", getenv_str("SLURM_NODELIST"),
        "--work-dir", getenv_str("SLURM_JOB_WORK_DIR"),
        "--stdout-pattern", getenv_str("SLURM_JOB_STDOUT"),
        "--stderr-pattern", getenv_str("SLURM_JOB_STDERR"),
        "--user", getenv_str("SLURM_JOB_USER"),
        "--log-bytes", std::to_string(config.log_bytes),
        "--read-timeout", fmt::format("{}", config.timeout / 4),
        "--job-type", job_type_option(sp),
    };
    if (config.admin_comment) argv.push_back("--admin-comment");
    // Only what the helper needs: libslurm finds slurmctld through SLURM_CONF.
    std::vector<std::string> env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
    if (const auto conf = getenv_str("SLURM_CONF"); !conf.empty()) env.push_back("SLURM_CONF=" + conf);
    mkdir(config.spool.c_str(), 0755);
    const auto r = acme::util::run_bounded(argv, env, fmt::format("{}/{}.faultguard.log", config.spool, node),
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

ACME_SPANK_EXPORT int slurm_spank_init(spank_t sp, int, char**) noexcept {
    return guarded(kPlugin, "init", 0, [&] {
        const spank_context_t ctx = spank_context();
        if (ctx != S_CTX_ALLOCATOR && ctx != S_CTX_LOCAL && ctx != S_CTX_REMOTE) return 0;
        if (spank_option_register(sp, &g_job_type) != ESPANK_SUCCESS)
            slurm_error("%s: cannot register --llm-job-type in %s context", kPlugin, acme::spank::context_name(ctx));
        return 0;
    });
}

ACME_SPANK_EXPORT int slurm_spank_task_exit(spank_t sp, int ac, char** av) noexcept {
    return guarded(kPlugin, "task_exit", 0, [&] { return spank_remote(sp) ? task_exit(sp, ac, av) : 0; });
}

ACME_SPANK_EXPORT int slurm_spank_job_epilog(spank_t sp, int ac, char** av) noexcept {
    return guarded(kPlugin, "job_epilog", 0, [&] { return job_epilog(sp, ac, av); });
}

}  // extern "C"
