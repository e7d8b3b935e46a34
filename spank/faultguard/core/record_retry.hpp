// When a node's record retrier tries again a part slurmdbd did not take (record_retrier.hpp).
//
// A publisher that runs out of its budget or hits its hard stop (slurmdbd down, frozen, or so
// slow that a write took 53 s at high load) leaves its part in the node's outbox. Without
// another try the run's record stays incomplete until the node's next epilog, hours away on a
// pretraining cluster, or never on a drained node. So the part gets further tries in rounds
// counted from the job's end (slurmctld's, the same on every node): the first round
// kRecordRetryFirstPauseSeconds after it (or max_pause_s when that is shorter), each pause twice
// the last up to max_pause_s, and no round at or past window_s. Every node of a job computes the
// same rounds, so in each round the nodes whose parts are left take turns again
// (core/publish_pacing.hpp counts the turns from the round's start), as in the first publish.
#pragma once

#include <cstddef>
#include <optional>

#include <nlohmann/json.hpp>

namespace acme::faultguard {

// The defaults of faultguard's record_retry= and record_retry_pause= (faultguard(8)).
constexpr double kRecordRetryDefaultSeconds = 1800.0;
constexpr double kRecordRetryPauseDefaultSeconds = 300.0;
constexpr double kRecordRetryFirstPauseSeconds = 60.0;
// Their bounds: a day of tries at most; pauses from 10 s (tests) to an hour.
constexpr double kRecordRetryMaxSeconds = 86400.0;
constexpr double kRecordRetryPauseMinSeconds = 10.0;
constexpr double kRecordRetryPauseMaxSeconds = 3600.0;

struct RetrySchedule {
    double window_s = kRecordRetryDefaultSeconds;       // no round at or past this, after the job's end; 0: none
    double max_pause_s = kRecordRetryPauseDefaultSeconds;  // the longest pause between two rounds
    bool operator==(const RetrySchedule&) const = default;
};

// The first round after `since_end_s` seconds past the job's end (strictly later), as seconds
// after the end; nullopt when no round is left before window_s.
std::optional<double> next_retry_round(const RetrySchedule& s, double since_end_s);

// The round `since_end_s` falls in: the latest round at or before it, or 0 before the first
// (the publisher's own try, which counts its turns from the job's end).
double current_retry_round(const RetrySchedule& s, double since_end_s);

// How many rounds the schedule has in all.
std::size_t retry_round_count(const RetrySchedule& s);

// The hand-off's "retry" object ({"for": SECONDS, "pause": SECONDS}, written by the epilog from
// the plugstack keys); the defaults where it is missing (hand-offs before it), values out of
// range clamped to the bounds above.
RetrySchedule retry_schedule_of(const nlohmann::json& handoff);
nlohmann::json retry_schedule_json(const RetrySchedule& s);

}  // namespace acme::faultguard
