// What the scheduler thread knows that the store does not: whether slurmctld answered its last
// round (and since when it has not), each active evaluation's forecast (evalsched/core/
// forecast.hpp) and since when an evaluation has been held with nothing of it running. The
// scheduler publishes it after every round; the API adds it to `GET /v1/evaluations/<id>` as
// "scheduler" so `evalsched status` and `watch` show trouble where it happens, with the time it
// began. Shared between the two threads behind a mutex; generation() changes whenever what
// of_evaluation() shows changes, so the API's reply cache can key on it.
#pragma once

#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace acme::evalsched {

struct EvalForecast {
    std::optional<double> finish_at;  // Unix seconds; nullopt: waiting for GPUs
    std::string basis;                // what the estimate rests on, one phrase
    std::string waiting_reason;       // why it waits, when it does
    std::optional<std::string> held;  // set: none of its trials holds GPUs and some are held, why
};

class SchedulerStatus {
public:
    // Scheduler thread. A failure keeps the time the trouble began until a round succeeds.
    void controller_failed(const std::string& error, double now);
    void controller_ok();
    // The forecasts of the active evaluations of this round (others are forgotten).
    void publish(const std::map<std::int64_t, EvalForecast>& forecasts, double now);

    // API thread: {"eta": {...} or null, "trouble": [{"kind", "since", "text"}]}. A waiting eta
    // carries "since" and "reason"; "held" trouble is shown only when the evaluation is not waiting.
    nlohmann::json of_evaluation(std::int64_t id) const;
    std::uint64_t generation() const;

    // How long a GPU freed by a trial's end stayed idle until the daemon submitted the next
    // trial (scheduler thread); /metrics serves it as the histogram
    // evalsched_gpu_refill_seconds (API thread, refill_metrics()). Since the daemon started.
    void observe_refill(double seconds);
    std::string refill_metrics() const;
    static constexpr double kRefillBuckets[] = {0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60};

private:
    struct Held {
        std::string reason;
        double since = 0;
    };
    mutable std::mutex mutex_;
    std::uint64_t generation_ = 0;
    std::optional<std::string> controller_error_;
    double controller_since_ = 0;
    std::map<std::int64_t, EvalForecast> forecasts_;
    std::map<std::int64_t, Held> held_;
    std::map<std::int64_t, double> waiting_since_;  // since when each waiting evaluation has waited
    std::uint64_t refill_buckets_[std::size(kRefillBuckets)] = {};  // not cumulative
    std::uint64_t refill_count_ = 0;
    double refill_sum_ = 0;
};

}  // namespace acme::evalsched
