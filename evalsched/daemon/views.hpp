// The API's JSON views of the state: an evaluation with its trials, the caller's list, a
// report (datasets x checkpoints), the priors, assembled from the rows the store reads for
// them (evalsched/store/view_rows.hpp), each only what the caller may see; the version stamps
// the API's reply cache keys them by are the store's (evalsched/store/stamps.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/store/database.hpp"
#include "evalsched/store/rows.hpp"
#include "evalsched/store/stamps.hpp"

namespace acme::evalsched {

// nullopt: no such evaluation, or another user's (the caller cannot tell which: no leak).
std::optional<nlohmann::json> evaluation_json(store::Database& db, std::int64_t id, const Caller& caller);
nlohmann::json list_json(store::Database& db, const Caller& caller);
// The summaries list_json shows, of the evaluations `ids` (already known visible), in id order.
std::vector<nlohmann::json> summaries_of(store::Database& db, const std::vector<std::int64_t>& ids, const Caller& caller);

// Scores for a run name (every checkpoint of it) or one evaluation id: datasets x checkpoints,
// a failed cell "failed: <reason>", and "failures": [{dataset, evaluation, reason, evidence,
// log}] for each of them (the deciding line and the job's log, "" where none was kept).
std::optional<nlohmann::json> report_json(store::Database& db, const std::string& name_or_id, const Caller& caller);
// Measured priors: one row per (dataset, size class, GPUs) of run times ("kind": "run") and,
// for the whole list only, one per (size class, GPUs) of trial startups ("kind": "startup",
// listed first under the name kStartupRow).
inline constexpr std::string_view kStartupRow = "(startup)";
nlohmann::json priors_json(store::Database& db, const std::string& dataset);

}  // namespace acme::evalsched
