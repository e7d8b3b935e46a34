#include "evalsched/daemon/follow_watcher.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

#include <event2/event.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "evalsched/core/user_environment.hpp"
#include "evalsched/daemon/api/routes/route.hpp"
#include "evalsched/daemon/caches.hpp"
#include "evalsched/daemon/log.hpp"
#include "evalsched/daemon/user_files.hpp"
#include "common/util/wall_clock.hpp"

namespace acme::evalsched {
namespace {

using util::wall_now;

// A scan's answer is bounded: 1 MiB is some 8,000 checkpoints.
constexpr std::size_t kMaxScanOutput = 1 << 20;

}  // namespace

FollowWatcher::FollowWatcher(const DaemonConfig& config, store::Database db, std::function<void()> wake, const std::atomic<int>* cluster_gpus)
    : config_(config), db_(std::move(db)), wake_(std::move(wake)), cluster_gpus_(cluster_gpus) {
    if (pipe2(stop_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error("follow watcher: cannot make its pipe");
}

FollowWatcher::~FollowWatcher() {
    if (thread_.joinable()) {
        const char c = 1;
        [[maybe_unused]] const ssize_t n = write(stop_pipe_[1], &c, 1);
        thread_.join();
    }
    close(stop_pipe_[0]);
    close(stop_pipe_[1]);
}

void FollowWatcher::start() {
    thread_ = std::thread([this] {
        event_base* base = event_base_new();
        if (!base) {
            log_line("follow: cannot start its event loop: no checkpoint directory is watched");
            return;
        }
        event* timer = event_new(base, -1, EV_PERSIST, on_timer, this);
        event* stop = event_new(base, stop_pipe_[0], EV_READ, on_stop, base);
        const auto us = static_cast<long>(config_.follow_interval_s * 1e6);
        const timeval every{us / 1000000, us % 1000000};
        event_add(timer, &every);
        event_add(stop, nullptr);
        on_timer(-1, 0, this);  // a first look at once: a follow survives restarts
        event_base_dispatch(base);
        event_free(timer);
        event_free(stop);
        event_base_free(base);
    });
}

void FollowWatcher::on_stop(int, short, void* base) { event_base_loopbreak(static_cast<event_base*>(base)); }

void FollowWatcher::on_timer(int, short, void* self) {
    auto* w = static_cast<FollowWatcher*>(self);
    try {
        w->scan_all(wall_now());
    } catch (const std::exception& e) {
        log_line("follow: round failed: {}", e.what());
    }
}

void FollowWatcher::scan_all(double now) {
    // Every follow's directory is listed at once, each by its own helper in its own thread,
    // kScansInFlight at a time: one user's hung file system costs that user's follow its
    // follow_scan_timeout, never a wait for everyone else's. What the scans found is then
    // taken one follow after another on this thread (the store has one writer here).
    const std::vector<FollowRow> follows = active_follows(db_);
    std::vector<FollowMemory> memories;
    for (const FollowRow& f : follows) memories.push_back(follow_memory(db_, f.id));
    std::vector<std::optional<HelperAnswer>> answers(follows.size());
    for (std::size_t from = 0; from < follows.size(); from += kScansInFlight) {
        std::vector<std::thread> scans;
        for (std::size_t i = from; i < std::min(follows.size(), from + kScansInFlight); ++i)
            scans.emplace_back([&, i] {
                const FollowRow& f = follows[i];
                const std::vector<std::string> argv{config_.follow_helper, "--dir", f.dir, "--rules", config_.checkpoint_rules, "--after",
                                                    std::to_string(memories[i].last_step)};
                answers[i] = run_helper_as_user(argv, f.uid, f.gid, kMaxScanOutput, config_.follow_scan_timeout_s);
            });
        for (auto& t : scans) t.join();
    }
    for (std::size_t i = 0; i < follows.size(); ++i) {
        const FollowRow& f = follows[i];
        try {
            take_scan(f, memories[i], answers[i], now);
        } catch (const std::exception& e) {
            log_line("follow {}: {}", f.id, e.what());
            record_scan(db_, f.id, e.what(), now);
        }
    }
}

void FollowWatcher::take_scan(const FollowRow& f, const FollowMemory& memory, const std::optional<HelperAnswer>& answer, double now) {
    if (!answer) {
        record_scan(db_, f.id, fmt::format("no answer from {} within {} s (a hung file system?)", f.dir, config_.follow_scan_timeout_s), now);
        return;
    }
    if (answer->status != 0) {
        std::string why = answer->output.substr(0, answer->output.find('\n'));
        if (why.empty()) why = fmt::format("{} failed (exit {})", config_.follow_helper, answer->status);
        record_scan(db_, f.id, printable(why, 300) + ": fix it, or evalsched cancel the follow", now);
        return;
    }
    const std::vector<ScannedCheckpoint> scanned = parse_scan_output(answer->output, f.dir);
    std::vector<FollowedCheckpoint> complete;
    for (const auto& s : scanned) complete.push_back(s.checkpoint);
    const Caller caller{f.uid, f.gid, f.user, false};
    ApiCaches caches;
    for (const FollowDecision& d : plan_follow(complete, memory, follow_options(f))) {
        if (!d.submit) {
            record_decision(db_, f.id, d, std::nullopt, now);
            log_line("follow {}: {} skipped: {}", f.id, printable(d.checkpoint.path, 200), d.reason);
            continue;
        }
        if (const auto orphan = orphaned_evaluation(db_, f, d.checkpoint.path)) {
            record_decision(db_, f.id, d, *orphan, now);
            continue;
        }
        const ScannedCheckpoint* s = nullptr;
        for (const auto& x : scanned)
            if (x.checkpoint.path == d.checkpoint.path) s = &x;
        // A follow stored before loader variables were refused still has them: they are left
        // out (and said so), since the submission below would be refused with them.
        std::vector<std::string> dropped;
        const std::vector<std::string> environment = without_loader_variables(f.environment, &dropped);
        if (!dropped.empty())
            log_line("follow {}: its stored environment holds {}: not carried to the trials (loader variables never are)", f.id,
                     printable(fmt::format("{}", fmt::join(dropped, ", ")), 200));
        nlohmann::json body{{"checkpoint", d.checkpoint.path}, {"name", f.name}, {"suite", f.suite}, {"suite_file", f.suite_file},
                            {"priority", f.priority}, {"checkpoint_bytes", s ? s->weight_bytes : 0.0}, {"environment", environment}};
        if (f.params_b > 0) body["params_b"] = f.params_b;
        else if (s && s->parameters > 0) body["params_b"] = std::max(s->parameters / 1e9, 0.001);
        const std::string text = body.dump();
        RouteMatch match;
        match.row = &route_row("POST", "/v1/evaluations");
        RouteContext ctx{db_, config_, caller, match, text, caches, wake_, cluster_gpus_ ? cluster_gpus_->load() : 0, now};
        const Reply reply = route_submit(ctx);
        const nlohmann::json r = nlohmann::json::parse(reply.text, nullptr, false);
        if (reply.code == 201 && r.is_object() && r.contains("id")) {
            record_decision(db_, f.id, d, r["id"].get<std::int64_t>(), now);
            log_line("follow {}: step {} ({}) is complete: evaluation {}", f.id, d.checkpoint.step, printable(d.checkpoint.path, 200),
                     r["id"].get<std::int64_t>());
            continue;
        }
        const std::string error = r.is_object() && r.contains("error") && r["error"].is_string() ? r["error"].get<std::string>() : reply.text;
        if (reply.code >= 500 || reply.code == 429) {
            // The daemon's own trouble, or the user's cap on active evaluations: try again next
            // round, the checkpoint undecided.
            record_scan(db_, f.id, printable(error, 300), now);
            return;
        }
        FollowDecision refused = d;
        refused.reason = "refused: " + printable(error, 300);
        record_decision(db_, f.id, refused, std::nullopt, now);
        log_line("follow {}: step {} refused: {}", f.id, d.checkpoint.step, printable(error, 300));
    }
    record_scan(db_, f.id, "", now);
}

}  // namespace acme::evalsched
