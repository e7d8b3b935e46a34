#include "spank/faultguard/core/record_retry.hpp"

#include <algorithm>
#include <cmath>

namespace acme::faultguard {
namespace {

double first_pause(const RetrySchedule& s) { return std::min(kRecordRetryFirstPauseSeconds, s.max_pause_s); }

// Calls `each(offset)` for every round in order until it returns false.
template <class Each>
void for_rounds(const RetrySchedule& s, Each each) {
    if (!(s.window_s > 0) || !(s.max_pause_s > 0)) return;
    double pause = first_pause(s);
    // The pause is at least kRecordRetryPauseMinSeconds once clamped; a guard for any other
    // value all the same: never more than a round per second of the window.
    pause = std::max(pause, 1.0);
    for (double at = pause; at < s.window_s; pause = std::min(2 * pause, std::max(pause, s.max_pause_s)), at += pause)
        if (!each(at)) return;
}

double clamped(const nlohmann::json& v, double fallback, double lo, double hi) {
    if (!v.is_number()) return fallback;
    const double x = v.get<double>();
    if (!std::isfinite(x)) return fallback;
    return std::clamp(x, lo, hi);
}

}  // namespace

std::optional<double> next_retry_round(const RetrySchedule& s, double since_end_s) {
    std::optional<double> out;
    for_rounds(s, [&](double at) {
        if (at > since_end_s) {
            out = at;
            return false;
        }
        return true;
    });
    return out;
}

double current_retry_round(const RetrySchedule& s, double since_end_s) {
    double out = 0;
    for_rounds(s, [&](double at) {
        if (at > since_end_s) return false;
        out = at;
        return true;
    });
    return out;
}

std::size_t retry_round_count(const RetrySchedule& s) {
    std::size_t n = 0;
    for_rounds(s, [&](double) {
        ++n;
        return true;
    });
    return n;
}

RetrySchedule retry_schedule_of(const nlohmann::json& handoff) {
    RetrySchedule s;
    if (!handoff.is_object() || !handoff.contains("retry") || !handoff["retry"].is_object()) return s;
    const auto& r = handoff["retry"];
    s.window_s = clamped(r.value("for", nlohmann::json()), s.window_s, 0, kRecordRetryMaxSeconds);
    s.max_pause_s = clamped(r.value("pause", nlohmann::json()), s.max_pause_s, kRecordRetryPauseMinSeconds,
                            kRecordRetryPauseMaxSeconds);
    return s;
}

nlohmann::json retry_schedule_json(const RetrySchedule& s) { return {{"for", s.window_s}, {"pause", s.max_pause_s}}; }

}  // namespace acme::faultguard
