// No trial held forever (issue 21): a trial whose --time no backfill window can hold would wait
// for ever, since the planner only places a trial into a window its limit fits. At submission:
// a trial whose estimate is a guess (no measured prior, no samples count: the generous default)
// has its estimate cut to fit the longest window, with a note saying so; one whose estimate is
// known, and which is still too long after sharding, refuses the submission with one line
// naming the dataset and what to do. Pure: the submit route and the unit tests call it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "evalsched/core/trials.hpp"

namespace acme::evalsched {

struct WindowFit {
    std::vector<std::string> notes;        // one line per capped trial, for the submitter
    std::optional<std::string> refusal;    // set: refuse the whole submission with this line
};

// window_s: the longest backfill window the scheduler ever uses (bf_window); the margins as
// the planner adds them (PlanOptions). Trials are changed in place only when nothing is refused.
WindowFit fit_to_window(TrialSet& set, double window_s, double margin_fraction, double margin_s);

}  // namespace acme::evalsched
