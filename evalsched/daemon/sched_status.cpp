#include "evalsched/daemon/sched_status.hpp"

#include <cmath>

#include <fmt/format.h>

namespace acme::evalsched {

using nlohmann::json;

void SchedulerStatus::observe_refill(double seconds) {
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < std::size(kRefillBuckets); ++i)
        if (seconds <= kRefillBuckets[i]) {
            ++refill_buckets_[i];
            break;
        }
    ++refill_count_;
    refill_sum_ += seconds;
}

std::string SchedulerStatus::refill_metrics() const {
    std::lock_guard lock(mutex_);
    std::string out = "# HELP evalsched_gpu_refill_seconds From a trial job's end (its GPUs freed) to the submission of the next trial.\n"
                      "# TYPE evalsched_gpu_refill_seconds histogram\n";
    std::uint64_t below = 0;
    for (std::size_t i = 0; i < std::size(kRefillBuckets); ++i) {
        below += refill_buckets_[i];
        out += fmt::format("evalsched_gpu_refill_seconds_bucket{{le=\"{}\"}} {}\n", kRefillBuckets[i], below);
    }
    out += fmt::format("evalsched_gpu_refill_seconds_bucket{{le=\"+Inf\"}} {}\n", refill_count_);
    out += fmt::format("evalsched_gpu_refill_seconds_sum {}\nevalsched_gpu_refill_seconds_count {}\n", refill_sum_, refill_count_);
    return out;
}

void SchedulerStatus::controller_failed(const std::string& error, double now) {
    std::lock_guard lock(mutex_);
    if (controller_error_ == error) return;
    if (!controller_error_) controller_since_ = now;
    controller_error_ = error;
    ++generation_;
}

void SchedulerStatus::controller_ok() {
    std::lock_guard lock(mutex_);
    if (!controller_error_) return;
    controller_error_.reset();
    ++generation_;
}

void SchedulerStatus::publish(const std::map<std::int64_t, EvalForecast>& forecasts, double now) {
    std::lock_guard lock(mutex_);
    bool changed = forecasts.size() != forecasts_.size();
    std::map<std::int64_t, Held> held;
    std::map<std::int64_t, double> waiting;
    for (const auto& [id, f] : forecasts) {
        auto old = forecasts_.find(id);
        // A finish that moved by less than a second is the same estimate: no new generation.
        const auto rounded = [](const std::optional<double>& t) { return t ? std::optional<double>(std::round(*t)) : std::nullopt; };
        if (old == forecasts_.end() || rounded(old->second.finish_at) != rounded(f.finish_at) || old->second.basis != f.basis ||
            old->second.waiting_reason != f.waiting_reason || old->second.held != f.held)
            changed = true;
        if (f.held) {
            auto was = held_.find(id);
            held[id] = {*f.held, was != held_.end() ? was->second.since : now};
        }
        if (!f.finish_at) {
            auto was = waiting_since_.find(id);
            waiting[id] = was != waiting_since_.end() ? was->second : now;
        }
    }
    if (held.size() != held_.size() || waiting.size() != waiting_since_.size()) changed = true;
    forecasts_ = forecasts;
    held_ = std::move(held);
    waiting_since_ = std::move(waiting);
    if (changed) ++generation_;
}

json SchedulerStatus::of_evaluation(std::int64_t id) const {
    std::lock_guard lock(mutex_);
    json out{{"eta", nullptr}, {"trouble", json::array()}};
    if (controller_error_)
        out["trouble"].push_back({{"kind", "controller"},
                                  {"since", controller_since_},
                                  {"text", "cannot reach slurmctld (" + *controller_error_ + "); evalschedd keeps trying every round"}});
    const auto f = forecasts_.find(id);
    const bool waiting = f != forecasts_.end() && !f->second.finish_at;
    // Held with nothing running is the waiting state itself when no trial has a place: said
    // once, by the ETA ("waiting for GPUs since ...: why"), not again as trouble.
    if (auto h = held_.find(id); h != held_.end() && !waiting)
        out["trouble"].push_back({{"kind", "held"}, {"since", h->second.since}, {"text", "nothing running; trials held: " + h->second.reason}});
    if (f != forecasts_.end()) {
        json eta{{"basis", f->second.basis}, {"waiting", waiting}};
        if (auto w = waiting_since_.find(id); waiting && w != waiting_since_.end()) eta["since"] = w->second;
        eta["finish_at"] = f->second.finish_at ? json(std::round(*f->second.finish_at)) : json(nullptr);
        if (!f->second.waiting_reason.empty()) eta["reason"] = f->second.waiting_reason;
        // A forecast made before slurmctld stopped answering is not one: it says so.
        eta["stale"] = controller_error_.has_value();
        out["eta"] = std::move(eta);
    }
    return out;
}

std::uint64_t SchedulerStatus::generation() const {
    std::lock_guard lock(mutex_);
    return generation_;
}

}  // namespace acme::evalsched
