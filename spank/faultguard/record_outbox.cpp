#include "spank/faultguard/record_outbox.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <ctime>

#include <fmt/format.h>

#include "common/util/parse.hpp"
#include "spank/faultguard/core/faultguard_paths.hpp"
#include "spank/faultguard/core/hard_stop.hpp"
#include "spank/faultguard/core/prepared_exec.hpp"
#include "spank/faultguard/core/record_retry.hpp"
#include "spank/faultguard/record_publish.hpp"

namespace acme::faultguard {
namespace {

// The detached publisher's own time: base, plus its pacing among the job's nodes (a write slot
// each, capped at a minute's turn), and a hard stop past that (publish_hard_stop_s) for libslurm
// calls that wait on a slurmdbd that accepted the connection and then hung or fell behind.
constexpr double kDetachedBaseSeconds = 40.0;
constexpr double kDetachedMaxTurnSeconds = 60.0;
// Until the pacing is known: a few file operations.
constexpr unsigned kReadHandoffSeconds = 20;

std::string read_all(int fd) {
    std::string text;
    char buf[8192];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        text.append(buf, static_cast<std::size_t>(n));
    }
    return text;
}

// The run's row, as the epilog named it (epilog_main.cpp); hand-offs before "start" name it by
// its submit time alone.
slurm::RunSelector run_of(const nlohmann::json& handoff) {
    const auto number = [&](const char* key) {
        const auto at = handoff.find(key);
        return at != handoff.end() && at->is_number() ? at->get<long long>() : 0LL;
    };
    slurm::RunSelector run;
    run.submit = number("submit");
    run.start = number("start");
    run.before = number("before");
    const auto unknown = handoff.find("run_unknown");
    run.unknown = unknown != handoff.end() && unknown->is_boolean() && unknown->get<bool>();
    return run;
}

}  // namespace

double publish_handoff_limit_s() {
    return kDetachedBaseSeconds + 3 * kDetachedMaxTurnSeconds + kSettleSeconds + 3 * kSlurmdbdCallSeconds + 1;
}

int publish_handoff(const std::string& path, bool retry_try) {
    // Stopped at any point, the part stays in the outbox (the lock goes with the process) and
    // the line says so: never a silent loss.
    arm_hard_stop(kReadHandoffSeconds,
                  fmt::format("acme-faultguard-epilog --publish {}: stopped after {} s before reading it; kept for another "
                              "try at the node's next epilog\n",
                              util::printable(path), kReadHandoffSeconds));
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return 0;  // another publisher took it and is done
        fmt::print(stderr, "acme-faultguard-epilog --publish {}: {}\n", util::printable(path), std::strerror(errno));
        return 2;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
        ::close(fd);
        fmt::print(stderr, "acme-faultguard-epilog --publish {}: not a regular file of ours\n", util::printable(path));
        return 2;
    }
    // One publisher per part: the first epilog's, or a later epilog's retry.
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0 || (::fstat(fd, &st) == 0 && st.st_nlink == 0)) {
        ::close(fd);
        return 0;
    }
    const auto handoff = nlohmann::json::parse(read_all(fd), nullptr, false);
    if (!handoff.is_object() || !handoff.contains("part") || !handoff.contains("expected") || !handoff.contains("node") ||
        !handoff["expected"].is_array() || !handoff["node"].is_string()) {
        fmt::print(stderr, "acme-faultguard-epilog --publish {}: not a record hand-off; removed\n", util::printable(path));
        unlink(path.c_str());
        ::close(fd);
        return 2;
    }
    slurm::JobRow row{handoff.value("job", 0u), handoff.value("array_job_id", 0u), handoff.value("array_task_id", 0u)};
    const auto node = handoff.value("node", std::string());
    const double age = static_cast<double>(std::time(nullptr) - st.st_mtime);
    if (age > kOutboxKeepSeconds) {
        fmt::print(stderr, "job {} on {}: record not in AdminComment: slurmdbd did not take it within {:.0f} days; given up\n",
                   row.job_id, node, kOutboxKeepSeconds / 86400);
        unlink(path.c_str());
        ::close(fd);
        return 1;
    }
    const auto expected = handoff["expected"].get<std::vector<std::string>>();
    // The job's end as slurmctld gave it (the same on every node); 0 in hand-offs before it.
    // Never later than now (core/publish_pacing.hpp): hand-offs written before the epilog capped
    // a requeued job's end hold backfill's guess at the next run's.
    const double now = static_cast<double>(std::time(nullptr));
    const double end = pacing_end(handoff.value("end", 0.0), now);
    double since_end = end > 0 ? std::max(0.0, now - end) : -1;
    const auto schedule = retry_schedule_of(handoff);
    // A retrier's try counts its turns from its round's start: every node of the job left with
    // a part computes the same rounds (core/record_retry.hpp).
    if (retry_try && since_end >= 0) since_end -= current_retry_round(schedule, since_end);
    // After this first try: the node's retrier, while a round is left in the part's window.
    const double anchor = end > 0 ? end : static_cast<double>(st.st_mtime);
    const double retry_until_min = schedule.window_s / 60;
    const bool retrier_follows = !retry_try && schedule.window_s > 0 && node.find('/') == std::string::npos &&
                                 next_retry_round(schedule, now - anchor).has_value();
    static PreparedExec retrier;
    if (retrier_follows) {
        const auto slash = path.rfind('/');
        const std::string dir = slash == std::string::npos ? std::string(".") : path.substr(0, slash);
        const auto up = dir.rfind('/');
        const std::string spool = up == std::string::npos ? std::string(".") : up == 0 ? std::string("/") : dir.substr(0, up);
        std::vector<std::string> env = {"PATH=/usr/bin:/bin"};
        if (const char* conf = std::getenv("SLURM_CONF")) env.push_back(fmt::format("SLURM_CONF={}", conf));
        // Not started while the node's retrier runs: it takes this part at its next look.
        retrier.prepare({"/proc/self/exe", "--retry-outbox", "--spool", spool, "--node", node}, env,
                        fmt::format("{}/{}", dir, record_retrier_lock_name(node)));
    }
    const std::string kept = retry_try ? std::string("kept")
                             : retrier_follows
                                 ? fmt::format("kept for another try: the node's retrier tries again until {:g} min after the "
                                               "job's end, then the node's next epilog",
                                               retry_until_min)
                                 : std::string("kept for another try at the node's next epilog");
    const auto pacing = publish_pacing(expected, node, kDetachedBaseSeconds, kDetachedMaxTurnSeconds, since_end);
    const unsigned hard_stop = publish_hard_stop_s(pacing);
    arm_hard_stop(hard_stop,
                  fmt::format("job {} on {}: record not in AdminComment: its {} was stopped at its hard limit ({} s: slurmdbd "
                              "did not answer in time); {}\n",
                              row.job_id, node, retry_try ? "try" : "publisher", hard_stop, kept),
                  1, retrier_follows ? &retrier : nullptr);
    const auto r = publish_node_part(row, handoff.value("restart", 0LL), run_of(handoff), expected, node, handoff["part"],
                                     pacing);
    arm_hard_stop(0, {});
    if (r.unreachable || r.out_of_time) {
        // The lock goes with the descriptor; the file stays for the retrier and the node's next epilog.
        fmt::print(stderr, "job {} on {}: record not in AdminComment: {}; {}\n", row.job_id, node, r.error, kept);
        std::fflush(stderr);
        ::close(fd);
        if (retrier_follows) retrier.start();
        return 1;
    }
    fmt::print(stderr, "{}", publish_result_line(row.job_id, node, r));
    unlink(path.c_str());
    ::close(fd);
    return r.published || r.no_accounting ? 0 : 1;
}

}  // namespace acme::faultguard
