#include "spank/faultguard/record_retrier.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <map>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/util/parse.hpp"
#include "common/util/spawn.hpp"
#include "spank/faultguard/core/hard_stop.hpp"
#include "spank/faultguard/core/outbox_files.hpp"
#include "spank/faultguard/core/record_retry.hpp"
#include "spank/faultguard/record_outbox.hpp"

namespace acme::faultguard {
namespace {

double wall() { return static_cast<double>(std::time(nullptr)); }

bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

// What it inherited from the publisher it was started from (a hard stop's handler included):
// nothing of it is kept but stderr, the helpers' log.
void start_clean() {
    const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    util::reset_inherited(devnull >= 0 ? devnull : STDIN_FILENO, devnull >= 0 ? devnull : STDOUT_FILENO, STDERR_FILENO);
    if (chdir("/") != 0) {
        // Nothing here is relative to it.
    }
    util::lower_to_background_priority();
}

// A part the retrier has seen: its rounds, and what its tries said.
struct Part {
    double anchor = 0;            // the job's end (the hand-off's mtime for hand-offs without it)
    RetrySchedule schedule;
    std::optional<double> due;    // its next round (wall clock); none: no round left
    int tries = 0;
    std::string last;             // why its last try did not write it
    long long job = 0;
    std::string node;
};

// "job 5 on n1: record not in AdminComment: WHY; kept" -> "WHY".
std::string why_of(const std::string& line) {
    std::string out = line;
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    if (const auto nl = out.rfind('\n'); nl != std::string::npos) out = out.substr(nl + 1);
    constexpr std::string_view marker = ": record not in AdminComment: ";
    if (const auto at = out.find(marker); at != std::string::npos) out = out.substr(at + marker.size());
    constexpr std::string_view kept = "; kept";
    if (out.ends_with(kept)) out.resize(out.size() - kept.size());
    return out.empty() ? std::string("its try said nothing") : util::printable(out, 300);
}

// A number of the hand-off, or 0 (missing, or not a number: a damaged file's publisher removes it).
double number(const nlohmann::json& handoff, const char* key) {
    if (!handoff.is_object()) return 0;
    const auto at = handoff.find(key);
    return at != handoff.end() && at->is_number() ? at->get<double>() : 0;
}

std::string last_line(const std::string& text) {
    std::string out = text;
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    if (const auto nl = out.rfind('\n'); nl != std::string::npos) out = out.substr(nl + 1);
    return out;
}

class Retrier {
public:
    Retrier(std::string spool, std::string node) : spool_(std::move(spool)), node_(std::move(node)) {
        env_ = {"PATH=/usr/bin:/bin"};
        if (const char* conf = std::getenv("SLURM_CONF")) env_.push_back(fmt::format("SLURM_CONF={}", conf));
    }

    // Looks at the outbox: true while some part of the node has a round left (locked by its
    // publisher or not). `next` is the earliest round of the parts no publisher holds.
    bool look(std::optional<std::string>& due_path, double& next) {
        const double now = wall();
        due_path.reset();
        next = now + kRetrierLookSeconds;
        bool pending = false;
        std::map<std::string, Part> seen;
        for (auto& e : outbox_entries(spool_, node_)) {
            auto known = parts_.find(e.path);
            Part p = known != parts_.end() ? known->second : Part{};
            if (known == parts_.end() || e.locked) {
                const double end = number(e.handoff, "end");
                // Never later than now (a clock set back, a damaged file): every part's rounds end.
                p.anchor = std::min(end > 0 ? end : e.mtime, now);
                p.schedule = retry_schedule_of(e.handoff);
                p.job = static_cast<long long>(number(e.handoff, "job"));
                p.node = e.handoff.is_object() && e.handoff.contains("node") && e.handoff["node"].is_string()
                             ? util::printable(e.handoff["node"].get<std::string>(), 100)
                             : node_;
                // Seen for the first time, or held by a publisher now: its next round from now on.
                const auto round = next_retry_round(p.schedule, now - p.anchor);
                p.due = round ? std::optional<double>(p.anchor + *round) : std::nullopt;
            }
            if (p.due) {
                pending = true;
                if (!e.locked) {
                    if (*p.due <= now && !due_path) due_path = e.path;
                    next = std::min(next, *p.due);
                }
            }
            seen.emplace(e.path, std::move(p));
        }
        parts_ = std::move(seen);  // parts gone since (published by another, or removed) are forgotten
        return pending;
    }

    // One try of the part at `path`, in its own process; one line when it ends the part's tries.
    void try_part(const std::string& path) {
        Part& p = parts_[path];
        const double limit = publish_handoff_limit_s() + 20;
        const auto r = util::run_bounded({"/proc/self/exe", "--publish", path, "--retry-try"}, env_, "", limit);
        ++p.tries;
        const double now = wall();
        const std::string said = last_line(r.output);
        if (!exists(path)) {
            // Written, or given up for good (the job was requeued since): the try's own line says which.
            if (said.find(": record in AdminComment (") != std::string::npos)
                fmt::print(stderr, "{}; by the node's retrier, try {}, {:.0f} s after the job's end\n", said, p.tries,
                           now - p.anchor);
            else if (!said.empty())
                fmt::print(stderr, "{}\n", said);
            parts_.erase(path);
            return;
        }
        p.last = !r.started ? util::printable(r.output, 300)
                 : r.timed_out ? fmt::format("its try did not end within {:.0f} s", limit)
                               : why_of(r.output);
        const auto round = next_retry_round(p.schedule, now - p.anchor);
        if (round) {
            p.due = p.anchor + *round;
            return;
        }
        p.due.reset();
        fmt::print(stderr,
                   "job {} on {}: record not in AdminComment: slurmdbd did not take it in {} tr{} of the node's retrier, "
                   "until {:g} min after the job's end (the last: {}); kept for another try at the node's next epilog\n",
                   p.job, p.node, p.tries, p.tries == 1 ? "y" : "ies", p.schedule.window_s / 60, p.last);
    }

private:
    std::string spool_, node_;
    std::vector<std::string> env_;
    std::map<std::string, Part> parts_;
};

}  // namespace

int run_record_retrier(const std::string& spool, const std::string& node) {
    start_clean();
    if (node.empty() || node.find('/') != std::string::npos || spool.empty()) {
        fmt::print(stderr, "acme-faultguard-epilog --retry-outbox: --spool and --node (a node name) are required\n");
        return 2;
    }
    bool held = false;
    std::string error;
    int lock = take_retrier_lock(spool, node, held, error);
    if (lock < 0) {
        if (held) return 0;  // the node's retrier runs: it takes the new part on its next look
        fmt::print(stderr, "acme-faultguard-epilog --retry-outbox on {}: {}; the outbox waits for the node's next epilog\n",
                   node, error);
        return 1;
    }
    Retrier retrier(spool, node);
    const double try_limit = publish_handoff_limit_s() + 20 + util::kKillGraceSeconds;
    const std::string stop_line = fmt::format(
        "acme-faultguard-epilog --retry-outbox on {}: stopped at its limit; the parts left wait for the node's next epilog\n", node);
    for (;;) {
        std::optional<std::string> due;
        double next = 0;
        if (!retrier.look(due, next)) {
            // Nothing left with a round. A publisher keeping a part now may have found the lock
            // still held and counted on this retrier: let go, look once more, and go on if the
            // lock is still to be had.
            if (::ftruncate(lock, 0) != 0) {
                // Only the pid it names goes stale; the lock is what counts.
            }
            ::close(lock);
            if (!retrier.look(due, next)) return 0;
            lock = take_retrier_lock(spool, node, held, error);
            if (lock < 0) return 0;  // another retrier took it over
            continue;
        }
        if (due) {
            arm_hard_stop(static_cast<unsigned>(std::ceil(try_limit + 60)), stop_line);
            retrier.try_part(*due);
            continue;
        }
        const double wait = std::clamp(next - wall(), 0.0, kRetrierLookSeconds);
        arm_hard_stop(static_cast<unsigned>(std::ceil(wait + 60)), stop_line);
        std::this_thread::sleep_for(std::chrono::duration<double>(std::max(wait, 0.2)));
    }
}

}  // namespace acme::faultguard
