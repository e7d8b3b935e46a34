// evalsched follow in the daemon's store: the follows (a training run's checkpoint directory,
// a suite, who asked, --every/--keep-up), and what each decided for every complete checkpoint
// it saw. Both only through here, as plain rows; the daemon's follows.hpp turns a request and
// the core's follow plan into them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/store/database.hpp"
#include "evalsched/store/rows.hpp"

namespace acme::evalsched {

// A user's active follows are bounded: each costs a scan of a directory every follow_interval.
inline constexpr int kMaxFollowsPerUser = 16;

struct FollowRow {
    std::int64_t id = 0;
    std::string dir, name, suite, suite_file, user;
    std::uint32_t uid = 0, gid = 0;
    int priority = 0;
    double params_b = 0;
    long long every = 0;   // --every: steps between evaluated checkpoints (core's FollowOptions)
    bool keep_up = false;  // --keep-up
    std::vector<std::string> environment;
};

// A follow row to insert, as requested.
struct NewFollow {
    std::string dir, name, suite_text, suite_file;
    int priority = 0;
    double params_b = 0;
    long long every = 0;
    bool keep_up = false;
    std::vector<std::string> environment;  // empty: none stored
};

// The new follow's id; nullopt when the caller already has kMaxFollowsPerUser active.
std::optional<std::int64_t> insert_follow(store::Database& db, const NewFollow& f, const Caller& caller, double now);
std::vector<FollowRow> active_follows(store::Database& db);
// false: no such follow that the caller may cancel (or it was cancelled already).
bool cancel_follow(store::Database& db, std::int64_t id, const Caller& caller, double now);
bool follow_exists(store::Database& db, std::int64_t id, const Caller& caller);

// What the follow decided so far, read at every scan (the core's FollowMemory): the newest
// step decided (-1: none), the newest submitted, and whether one of its evaluations is active.
struct FollowHistory {
    long long last_step = -1;
    long long last_submitted = -1;
    bool evaluating = false;
};
FollowHistory follow_history(store::Database& db, std::int64_t follow);
// The evaluation of `path` a daemon killed between submitting it and recording it left
// behind (same user, run and path, submitted since the follow began); nullopt: none.
std::optional<std::int64_t> orphaned_evaluation(store::Database& db, const FollowRow& f, const std::string& path);
// One checkpoint decided: submitted (with its evaluation) or skipped (`reason` says why).
void record_checkpoint(store::Database& db, std::int64_t follow, long long step, const std::string& path,
                       std::optional<std::int64_t> evaluation, const std::string& reason, double now);
void record_scan(store::Database& db, std::int64_t follow, const std::string& problem, double now);

// GET /v1/follows: the caller's follows (an admin's: all), each with its decisions.
nlohmann::json follows_json(store::Database& db, const Caller& caller);

}  // namespace acme::evalsched
