// What the API keeps between requests so a busy store does not cost a whole-store read per
// request: whole answers by the versions they show, per-evaluation summaries by version, and
// the priors summary until prior_runs changes. Requests are served one at a time on one event
// loop while the scheduler thread commits every round, so a read must not cost a whole-store
// query each time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/store/database.hpp"
#include "evalsched/store/rows.hpp"

namespace acme::evalsched {

// list_json(db, caller).dump(), keeping each evaluation's summary until its version changes
// (the store bumps it on every change a summary shows): a busy scheduler committing every
// round costs the next list one rebuilt summary per changed evaluation, not a whole-store
// read. One per connection (not thread-safe).
class SummaryCache {
public:
    std::string list_text(store::Database& db, const Caller& caller);
    int rebuilt() const { return rebuilt_; }  // summaries built so far (tests)

private:
    static constexpr std::size_t kMaxEntries = 100000;
    struct Entry {
        std::int64_t version;
        std::string text;
    };
    std::unordered_map<std::int64_t, Entry> entries_;
    int rebuilt_ = 0;
};

// priors_json without re-reading every prior run on each request: the summary of all datasets
// is kept until prior_runs or prior_startups changes (a trial finishing with a run time adds one, pruning drops
// some), which costs two index lookups to check. One per connection (not thread-safe).
class PriorsCache {
public:
    nlohmann::json get(store::Database& db, const std::string& dataset);
    int rebuilds() const { return rebuilds_; }  // how often it read prior_runs (tests)

private:
    bool valid_ = false;
    std::array<std::int64_t, 4> key_{};  // newest id and row count of prior_runs, then of prior_startups
    nlohmann::json all_;
    int rebuilds_ = 0;
};

// Answers to `status ID` and `report`, each kept under a key with the stamp (the versions of
// the evaluations it shows) it was built for. One per connection (not thread-safe).
class ReplyCache {
public:
    // The kept text, or nullptr when there is none for this stamp.
    const std::string* find(const std::string& key, const std::string& stamp) const;
    void keep(const std::string& key, const std::string& stamp, std::string text);

private:
    static constexpr std::size_t kMaxReplies = 4096;
    std::unordered_map<std::string, std::pair<std::string, std::string>> replies_;  // key -> stamp, text
};

// The API's caches together, as its route handlers reach them.
struct ApiCaches {
    ReplyCache replies;
    SummaryCache summaries;
    PriorsCache priors;
};

}  // namespace acme::evalsched
