// evalsched follow in the daemon's store: the follows (a training run's checkpoint directory,
// a suite, who asked, --every/--keep-up), and what each decided for every complete checkpoint
// it saw. Both only through here; the watcher (follow_watcher.hpp) and the routes
// (routes/follow.cpp) call these.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/store/database.hpp"
#include "evalsched/core/follow_plan.hpp"
#include "evalsched/daemon/api/api_request.hpp"
#include "evalsched/daemon/follow_request.hpp"
#include "evalsched/daemon/rows.hpp"

namespace acme::evalsched {

// A user's active follows are bounded: each costs a scan of a directory every follow_interval.
inline constexpr int kMaxFollowsPerUser = 16;

struct FollowRow {
    std::int64_t id = 0;
    std::string dir, name, suite, suite_file, user;
    std::uint32_t uid = 0, gid = 0;
    int priority = 0;
    double params_b = 0;
    FollowOptions options;
    std::vector<std::string> environment;
};

// The new follow's id; nullopt when the caller already has kMaxFollowsPerUser active.
std::optional<std::int64_t> create_follow(store::Database& db, const FollowRequest& req, const Caller& caller, double now);
std::vector<FollowRow> active_follows(store::Database& db);
// false: no such follow that the caller may cancel (or it was cancelled already).
bool cancel_follow(store::Database& db, std::int64_t id, const Caller& caller, double now);
bool follow_exists(store::Database& db, std::int64_t id, const Caller& caller);

// What the follow decided so far (FollowMemory), read at every scan.
FollowMemory follow_memory(store::Database& db, std::int64_t follow);
// The evaluation of `path` a daemon killed between submitting it and recording it left
// behind (same user, run and path, submitted since the follow began); nullopt: none.
std::optional<std::int64_t> orphaned_evaluation(store::Database& db, const FollowRow& f, const std::string& path);
void record_decision(store::Database& db, std::int64_t follow, const FollowDecision& d, std::optional<std::int64_t> evaluation,
                     double now);
void record_scan(store::Database& db, std::int64_t follow, const std::string& problem, double now);

// GET /v1/follows: the caller's follows (an admin's: all), each with its decisions.
nlohmann::json follows_json(store::Database& db, const Caller& caller);

}  // namespace acme::evalsched
