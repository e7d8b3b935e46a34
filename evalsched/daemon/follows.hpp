// evalsched follow between the daemon and its store: a follow request becomes the store's row,
// and the store's rows become what the core's follow plan reads and decides
// (evalsched/core/follow_plan.hpp). The watcher (follow_watcher.hpp) and the routes
// (routes/follow.cpp) call these and the store's follows.hpp.
#pragma once

#include <cstdint>
#include <optional>

#include "common/store/database.hpp"
#include "evalsched/core/follow_plan.hpp"
#include "evalsched/daemon/follow_request.hpp"
#include "evalsched/store/follows.hpp"
#include "evalsched/store/rows.hpp"

namespace acme::evalsched {

// The new follow's id; nullopt when the caller already has kMaxFollowsPerUser active.
std::optional<std::int64_t> create_follow(store::Database& db, const FollowRequest& req, const Caller& caller, double now);
// What the follow decided so far (FollowMemory), read at every scan.
FollowMemory follow_memory(store::Database& db, std::int64_t follow);
// --every and --keep-up as the core's plan_follow takes them.
FollowOptions follow_options(const FollowRow& f);
void record_decision(store::Database& db, std::int64_t follow, const FollowDecision& d, std::optional<std::int64_t> evaluation,
                     double now);

}  // namespace acme::evalsched
