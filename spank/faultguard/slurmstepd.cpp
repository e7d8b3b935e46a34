// faultguard.so in slurmstepd (remote context, root, once per step; pyxis_slurmstepd.c):
// for a job that asked for recovery, the newest checkpoint and the restart count go into the
// job's environment, and task_exit hands the checkpoint it resumed from to the epilog (each
// task's wait status is the shim's to append, spank/faultguard/shim.c). Nothing heavy: the
// one search of the checkpoint directory is a helper, bounded in time.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "common/util/parse.hpp"
#include "common/util/spawn.hpp"
#include "spank/faultguard/core/faultguard_paths.hpp"
#include "spank/faultguard/plugin.hpp"

namespace acme::faultguard::plugin {
namespace {

using acme::spank::plain_node_name;

// In slurmstepd, for every task of a job that asked for recovery: ACME_RESTART_COUNT. Slurm
// adds SLURM_RESTART_COUNT to a requeued job's environment only after init_post_opt, so this
// runs in task_init, just before the task starts.
int set_restart_env(spank_t sp) {
    const auto& opts = job_options();
    if (opts.ckpt_dir.empty() && !opts.auto_recover) return 0;
    uint32_t restarts = 0;
    spank_get_item(sp, S_SLURM_RESTART_COUNT, &restarts);
    char buf[32] = {};
    if (spank_getenv(sp, "SLURM_RESTART_COUNT", buf, sizeof buf) == ESPANK_SUCCESS)
        if (const auto n = acme::util::parse_int(buf); n && *n > static_cast<long long>(restarts))
            restarts = static_cast<uint32_t>(*n);
    spank_setenv(sp, "ACME_RESTART_COUNT", std::to_string(restarts).c_str(), 1);
    return 0;
}

// This step's ACME_RESUME_CKPT, kept for task_exit; nullopt without --ckpt-dir.
std::optional<std::string>& resumed_from() {
    static std::optional<std::string> value;
    return value;
}

// In slurmstepd, for every step of a job that gave --ckpt-dir: the newest complete checkpoint
// into the job's environment. The directory is read by a helper
// that becomes the job's user first, bounded in time.
int set_resume_env(spank_t sp, int ac, char** av) {
    const std::string& ckpt_dir = job_options().ckpt_dir;
    if (ckpt_dir.empty()) return 0;
    const auto config = load_config(ac, av);
    uid_t uid = 0;
    gid_t gid = 0;
    uint32_t job_id = 0;
    spank_get_item(sp, S_JOB_UID, &uid);
    spank_get_item(sp, S_JOB_GID, &gid);
    spank_get_item(sp, S_JOB_ID, &job_id);
    const auto r = acme::util::run_bounded({config.ckpt_finder, "--dir", ckpt_dir, "--rules",
                                            config.ckpt_rules, "--uid", std::to_string(uid), "--gid",
                                            std::to_string(gid)},
                                           {"PATH=/usr/bin:/bin"}, "", config.ckpt_timeout);
    std::string path;
    if (r.started && !r.timed_out && WIFEXITED(r.wait_status) && WEXITSTATUS(r.wait_status) == 0) {
        path = r.output.substr(0, r.output.find('\t'));
    } else {
        std::string why = r.timed_out ? fmt::format("took over {} s", config.ckpt_timeout) : r.output;
        if (why.empty())
            why = r.started ? fmt::format("{} failed (wait status {})", config.ckpt_finder, r.wait_status)
                            : fmt::format("cannot run {}", config.ckpt_finder);
        slurm_error("%s: job %u: cannot look for checkpoints in %s: %s", kPlugin, job_id, ckpt_dir.c_str(),
                    why.c_str());
        // Say so in the job's environment: starting over silently would throw away days of work.
        spank_setenv(sp, "ACME_RESUME_ERROR", why.c_str(), 1);
    }
    spank_setenv(sp, "ACME_RESUME_CKPT", path.c_str(), 1);
    // For the job record: what this run resumed from, handed over at task exit (the node's
    // name is not in the step's environment yet here).
    const bool found = r.started && !r.timed_out && WIFEXITED(r.wait_status) && WEXITSTATUS(r.wait_status) == 0;
    resumed_from() = found ? path : "(checkpoint search failed: " + r.output.substr(0, 200) + ")";
    // The finder's third field (the checkpoint's mtime) rides along: "PATH\tMTIME" (resume_path).
    if (const auto tab = r.output.find('\t', path.size() + 1); found && !path.empty() && tab != std::string::npos) {
        std::string mtime = r.output.substr(tab + 1);
        while (!mtime.empty() && (mtime.back() == '\n' || mtime.back() == '\r')) mtime.pop_back();
        if (acme::util::parse_int(mtime)) *resumed_from() += "\t" + mtime;
    }
    return 0;
}

}  // namespace

int slurmstepd_init_post_opt(spank_t sp, int ac, char** av) { return set_resume_env(sp, ac, av); }

int slurmstepd_task_init(spank_t sp) { return set_restart_env(sp); }

// The task's exit line itself is the shim's (spank/faultguard/shim.c, the one writer, loaded or
// not); what only this side knows is the checkpoint the run resumed from, for the job record.
int slurmstepd_task_exit(spank_t sp, int ac, char** av) {
    // Once per step: every task of it would write the same line.
    static bool resume_written = false;
    const auto& resumed = resumed_from();
    if (!resumed || resume_written) return 0;
    uint32_t job_id = 0;
    char node[256] = {};
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS ||
        spank_getenv(sp, "SLURMD_NODENAME", node, sizeof node) != ESPANK_SUCCESS || !plain_node_name(node))
        return 0;
    resume_written = true;
    const auto config = load_config(ac, av);
    mkdir(config.spool.c_str(), 0700);
    mkdir(run_dir(config.spool).c_str(), 0700);
    // One short write, never blocking.
    const std::string file = resume_path(config.spool, node, job_id);
    const int rfd = ::open(file.c_str(), O_WRONLY | O_TRUNC | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
    if (rfd >= 0) {
        const std::string text = *resumed + "\n";
        if (::write(rfd, text.data(), text.size()) < 0) slurm_error("%s: job %u: cannot write %s", kPlugin, job_id, file.c_str());
        ::close(rfd);
    }
    return 0;
}

}  // namespace acme::faultguard::plugin
