// faultguard.so in job_script context (a fresh `slurmstepd spank prolog|epilog` process per
// call, root, once per node; only S_JOB_UID/GID/ID, options only through spank_option_getopt).
// The prolog runs the health gate and the epilog the diagnosis, each as a helper process this
// one waits for a bounded time: neither can hang or crash slurmd, and a helper that cannot run
// lets the job through.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/store/spool_stalls.hpp"
#include "common/util/parse.hpp"
#include "common/util/spawn.hpp"
#include "spank/faultguard/core/epilog_args.hpp"
#include "spank/faultguard/core/faultguard_paths.hpp"
#include "spank/faultguard/core/gate_client.hpp"
#include "spank/faultguard/core/task_exit_log.hpp"
#include "spank/faultguard/plugin.hpp"

namespace acme::faultguard::plugin {

using acme::spank::getenv_str;
using acme::spank::plain_node_name;

namespace {

// How long a prolog waits for the resident gate before it runs the gate process instead.
constexpr double kResidentAskSeconds = 1.0;

// A diagnosis past timeout= goes on detached (or, stopped, runs again) for this many times the
// time more (at most the hour --detached takes): what overran once on a loaded node needs more.
constexpr double kRerunFactor = 6.0;

// A helper's output without its last newline, so the plugin's "(epilog N ms)" ends its line.
std::string trimmed(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text;
}

// The task exits slurmstepd handed over for this job, whole; nullopt when the file cannot be read
// whole (it is root's, in the spool's run directory; a job of very many tasks is just diagnosed).
std::optional<std::string> read_task_exits(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return errno == ENOENT ? std::optional<std::string>(std::string()) : std::nullopt;
    std::string text(64 * 1024, '\0');
    struct stat st {};
    ssize_t n = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < static_cast<off_t>(text.size()))
        n = ::read(fd, text.data(), text.size());
    ::close(fd);
    if (n < 0 || n != st.st_size) return std::nullopt;
    text.resize(static_cast<std::size_t>(n));
    return text;
}

}  // namespace

// The pre-job health gate: bounded, and a gate that cannot run lets the job through. The node's
// resident gate is asked first (resident_gate.hpp); the first job on a node, or one it does not
// pass, runs the gate process.
int job_script_prolog(spank_t sp, int ac, char** av) {
    const auto t0 = std::chrono::steady_clock::now();
    // A job without GPUs has nothing to gate: back before the plugstack arguments are parsed, for
    // srun waits on this prolog (PrologFlags=Alloc) and polls for it at widening intervals.
    const std::string gpus = getenv_str("SLURM_JOB_GPUS");
    if (gpus.empty()) return 0;
    const auto config = load_config(ac, av);
    if (!config.health_gate) return 0;
    uint32_t job_id = 0;
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) return 0;
    const std::string node = getenv_str("SLURMD_NODENAME");
    if (!plain_node_name(node)) return 0;
    std::vector<std::string> env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "SLURMD_NODENAME=" + node};
    if (const auto conf = getenv_str("SLURM_CONF"); !conf.empty()) env.push_back("SLURM_CONF=" + conf);
    mkdir(config.spool.c_str(), 0700);
    if (config.gate_resident > 0) {
        // The node's resident gate answers in milliseconds; a gate process costs this prolog
        // (which srun waits for) tens of them. Anything but a pass goes to the gate process.
        GateAnswer answer;
        std::string why;
        const auto request = format_gate_request({job_id, gpus, config.nvml, config.rules});
        const auto reply = request ? ask_resident_gate(gate_socket_path(config.spool, node), *request,
                                                       std::min(kResidentAskSeconds, config.gate_timeout / 2), answer, why)
                                   : GateReply::failed;
        if (reply == GateReply::answered && answer.passed) {
            slurm_info("%s: %s (prolog %.0f ms)", kPlugin, answer.text.c_str(), acme::spank::ms_since(t0));
            return 0;
        }
        if (reply == GateReply::absent) {
            mkdir(run_dir(config.spool).c_str(), 0700);
            std::string error;
            if (!acme::util::spawn_detached({config.gate_helper, "--serve", "--node", node, "--spool", config.spool, "--nvml",
                                             config.nvml, "--rules", config.rules, "--idle",
                                             fmt::format("{:g}", config.gate_resident)},
                                            env, log_path(config.spool, node), error))
                slurm_error("%s: cannot start the resident health gate: %s", kPlugin, error.c_str());
        } else if (reply == GateReply::answered) {
            slurm_info("%s: job %u: %s; the gate process decides", kPlugin, job_id, answer.text.c_str());
        } else {
            slurm_error("%s: job %u: the resident health gate did not answer (%s); the gate process decides", kPlugin,
                        job_id, why.c_str());
        }
    }
    const auto r = acme::util::run_bounded({config.gate_helper, "--node", node, "--job", std::to_string(job_id), "--gpus",
                                            gpus, "--spool", config.spool, "--nvml", config.nvml, "--rules", config.rules},
                                           env, log_path(config.spool, node),
                                           config.gate_timeout);
    if (!r.started)
        slurm_error("%s: job %u: cannot run the health gate %s: %s", kPlugin, job_id, config.gate_helper.c_str(),
                    r.output.c_str());
    else if (r.timed_out)
        slurm_error("%s: job %u: the health gate took over %g s and was stopped; letting the job run", kPlugin, job_id,
                    config.gate_timeout);
    else if (WIFEXITED(r.wait_status) && WEXITSTATUS(r.wait_status) == 1)
        slurm_error("%s: %s (prolog %.0f ms)", kPlugin, trimmed(r.output).c_str(), acme::spank::ms_since(t0));
    else
        slurm_info("%s: %s (prolog %.0f ms)", kPlugin, trimmed(r.output).c_str(), acme::spank::ms_since(t0));
    return 0;
}

int job_script_epilog(spank_t sp, int ac, char** av) {
    const auto t0 = std::chrono::steady_clock::now();
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
    a.sluid = getenv_str("SLURM_JOB_SLUID");
    a.log_bytes = config.log_bytes;
    a.read_timeout = config.timeout / 4;
    a.job_type = job_type_option(sp);
    a.auto_recover = auto_recover_option(sp);
    a.gpucheck = config.gpucheck;
    a.drain_per_user = config.drain_per_user;
    a.admin_comment = config.admin_comment;
    a.record_retry = config.record_retry;
    a.record_retry_pause = config.record_retry_pause;
    a.llm_endpoint = config.llm_endpoint;
    a.llm_model = config.llm_model;
    a.llm_token_file = config.llm_token_file;
    a.llm_timeout = config.llm_timeout;
    a.llm_below = config.llm_below;
    // Only what the helper needs: libslurm finds slurmctld through SLURM_CONF.
    std::vector<std::string> env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
    if (const auto conf = getenv_str("SLURM_CONF"); !conf.empty()) env.push_back("SLURM_CONF=" + conf);
    mkdir(config.spool.c_str(), 0700);
    // A job that ended cleanly has nothing to diagnose, drain or requeue: its rows and record can
    // be written after slurmd gave the node back, and the next job (often the same user's next
    // srun) does not wait for them. A failed job's epilog holds the node until recovery decided;
    // so does one the sampler cancelled for a stall, which looks clean on a node without tasks.
    // The helper detached with `a` as it stands (a.detached its time limit): for a job that ended
    // cleanly, and for a diagnosis that overran timeout= and could not go on by itself (below).
    const auto start_detached = [&](std::string& error) {
        return acme::util::spawn_detached(epilog_argv(config.helper, a), env, log_path(config.spool, node), error,
                                          acme::util::Priority::background);
    };
    struct stat mark {};
    const bool stall_cancelled = ::lstat(acme::store::stall_cancel_mark_path(config.spool, node, job_id).c_str(), &mark) == 0;
    if (!stall_cancelled && ended_cleanly(a.exit_code2, read_task_exits(task_exit_path(config.spool, node, job_id)))) {
        a.detached = config.timeout;
        std::string error;
        if (start_detached(error)) {
            slurm_info("%s: job %u on %s: completed; its rows and record are written after the epilog (epilog %.0f ms)",
                       kPlugin, job_id, node.c_str(), acme::spank::ms_since(t0));
            return 0;
        }
        a.detached = 0;  // could not start detached: the bounded run below
    }
    // Past timeout= (a node so loaded that 60 ms of diagnosis took 20 s: 35 of a 256-node job's
    // nodes on the 2-core minicluster) the node is given back, and the helper goes on detached
    // with what it has done, for kRerunFactor times as long more, without recovery: a drain or
    // requeue decided later would land on the next job. The record says what the rules found.
    const double more = std::min(3600.0, kRerunFactor * config.timeout);
    a.go_on = std::min(3600.0, config.timeout + more);
    const auto r = acme::util::run_bounded(epilog_argv(config.helper, a), env, log_path(config.spool, node), config.timeout,
                                           4096, {kGoOnSignal, kGoOnAck});
    if (!r.started) {
        slurm_error("%s: job %u: cannot run %s: %s", kPlugin, job_id, config.helper.c_str(), r.output.c_str());
    } else if (r.released) {
        slurm_error("%s: job %u on %s: diagnosis did not finish within %g s; it goes on after the epilog, detached, no "
                    "recovery, for the job's record (epilog %.0f ms)",
                    kPlugin, job_id, node.c_str(), config.timeout, acme::spank::ms_since(t0));
    } else if (r.timed_out) {
        // It did not answer the hand-over (not started that far, or stuck): stopped, and run
        // again detached from the start, so its record part is not given up.
        a.go_on = 0;
        a.detached = more;
        a.auto_recover = -1;
        std::string error;
        if (start_detached(error))
            slurm_error("%s: job %u on %s: diagnosis did not finish within %g s and was stopped, no recovery; it runs "
                        "again after the epilog for the job's record (epilog %.0f ms)",
                        kPlugin, job_id, node.c_str(), config.timeout, acme::spank::ms_since(t0));
        else
            slurm_error("%s: job %u on %s: diagnosis did not finish within %g s and was stopped, no recovery; not run "
                        "again (%s): this node's part of the job's record is missing",
                        kPlugin, job_id, node.c_str(), config.timeout, error.c_str());
    } else {
        slurm_info("%s: %s (epilog %.0f ms)", kPlugin, trimmed(r.output).c_str(), acme::spank::ms_since(t0));
    }
    return 0;
}

}  // namespace acme::faultguard::plugin
