// The stamps the API's caches key their answers by (evalsched/daemon/caches.hpp): each changes
// whenever the answer it stands for would. An evaluation's version is bumped by the store's
// own triggers (schema v5) on every change a status or report shows; the priors' stamp is the
// newest id and row count of the prior tables.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/store/database.hpp"
#include "evalsched/store/rows.hpp"

namespace acme::evalsched {

// The evaluation's version; nullopt when there is none or the caller may not see it.
std::optional<std::int64_t> evaluation_version(store::Database& db, std::int64_t id, const Caller& caller);
// "id:version,..." of the evaluations a report of `name_or_id` covers, as the caller sees them.
std::string report_versions(store::Database& db, const std::string& name_or_id, const Caller& caller);
// (id, version) of every evaluation the caller may see, in id order: what a list shows.
std::vector<std::pair<std::int64_t, std::int64_t>> visible_versions(store::Database& db, const Caller& caller);
// prior_runs' newest id and row count, then prior_startups': they only grow (finish_attempt)
// and lose their oldest rows (prune_prior_runs), so these change whenever priors_json's answer does.
std::array<std::int64_t, 4> priors_stamp(store::Database& db);

}  // namespace acme::evalsched
