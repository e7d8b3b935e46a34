// Evaluations as a whole: created with all their trials and metric jobs, cancelled, listed for
// the scheduler, and closed once nothing in them can change.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/store/database.hpp"
#include "evalsched/core/trials.hpp"
#include "evalsched/daemon/api/api_request.hpp"
#include "evalsched/daemon/rows.hpp"

namespace acme::evalsched {

// A new evaluation and all its trials, in one transaction. Its output directory is
// <results_dir>/<id>, so the trials (whose commands name it) are made once the id is known.
// Returns the id.
std::int64_t create_evaluation(store::Database& db, const SubmitRequest& req, const Caller& caller,
                               const std::string& results_dir, const std::function<TrialSet(const std::string& output_dir)>& make,
                               double now);

// The environment the evaluation was submitted from (empty for one submitted without).
std::vector<std::string> load_environment(store::Database& db, std::int64_t evaluation);
// The stage globs its trials copy (one per line; empty: the whole checkpoint).
std::string load_stage(store::Database& db, std::int64_t evaluation);

enum class CancelResult { cancelled, not_found, already_finished };
CancelResult cancel_evaluation(store::Database& db, std::int64_t id, const Caller& caller, double now);

std::vector<EvalInfo> active_evaluations(store::Database& db);
// How many of uid's evaluations are active (max_evaluations_per_user).
int active_evaluations_of(store::Database& db, std::uint32_t uid);
std::optional<EvalInfo> load_evaluation(store::Database& db, std::int64_t id);

// Closes the evaluation when none of its trials and metric jobs can change any more. Called
// inside the transaction that ended one of them.
void close_if_finished(store::Database& db, std::int64_t evaluation, double now);

}  // namespace acme::evalsched
