// A submission turned into the store's rows: the request and the core's trial set flattened
// into evalsched/store/evaluations.hpp's NewEvaluation and NewTrials, and the stored
// environment read back as a job may be given it. The store itself knows neither the request
// nor the core's types.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/store/database.hpp"
#include "evalsched/core/trials.hpp"
#include "evalsched/daemon/api/api_request.hpp"
#include "evalsched/store/evaluations.hpp"
#include "evalsched/store/rows.hpp"

namespace acme::evalsched {

// A new evaluation and all its trials, in one transaction (insert_evaluation). Its output
// directory is <results_dir>/<id>, so the trials (whose commands name it) are made once the id
// is known. Returns the id.
std::int64_t create_evaluation(store::Database& db, const SubmitRequest& req, const Caller& caller,
                               const std::string& results_dir, const std::function<TrialSet(const std::string& output_dir)>& make,
                               double now);

// The core's trial as a row to insert (its parts' datasets comma-separated, as TrialRow::parts
// splits them again).
NewTrial new_trial(const Trial& t);

// The environment the evaluation was submitted from (empty for one submitted without), without
// the loader variables a store from before their refusal may hold: never given to a job.
std::vector<std::string> load_environment(store::Database& db, std::int64_t evaluation);

}  // namespace acme::evalsched
