// evalschedd's rows as the daemon uses them, each read through one table of (column, field)
// pairs so a SELECT list and its reader cannot drift apart; and who may see an evaluation.
// evalsched/store holds every statement on evalschedd's tables and hands back these rows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/store/database.hpp"

namespace acme::evalsched {

struct Caller {
    std::uint32_t uid = 0, gid = 0;
    std::string user;
    bool admin = false;   // root or a member of admin_group: sees every evaluation
};

// The one visibility rule: an admin sees every evaluation, anyone else their own. A WHERE
// fragment on the evaluations table (aliased `alias`, "" for none); the caller's numbers are
// inlined (integers, never text), so it binds nothing and composes with any placeholders.
std::string visible_to(const Caller& caller, std::string_view alias = "");
// The same rule on a row already read.
bool may_see(const Caller& caller, std::uint32_t owner_uid);
// Whether the caller may see evaluation `id`; false also when it does not exist (the caller
// cannot tell which: no leak).
bool visible(store::Database& db, std::int64_t id, const Caller& caller);

struct EvalInfo {
    std::int64_t id = 0;
    std::string name, checkpoint, path, user, output_dir;
    std::uint32_t uid = 0, gid = 0;
    double checkpoint_bytes = 0, params_b = 0, submitted_at = 0;
    int priority = 0;
    std::string key() const { return name + "/" + checkpoint; }  // the core's Checkpoint::name
};

struct TrialRow {
    std::int64_t id = 0, evaluation = 0;
    std::string trial_key, datasets, command, excluded_nodes, state;
    int shard = 0, num_shards = 1, gpus = 1, attempts = 0;
    double median_s = 0, p90_s = 0, startup_s = 0, metric_s = 0;
    bool conservative = false;
    std::vector<std::string> parts() const;  // datasets split on ','
};

// A trial's excluded_nodes, comma-separated as Slurm's --exclude takes them: `list` with
// `node` appended unless already there (or empty). A retry after an infrastructure failure
// adds the node it failed on (finish_attempt).
std::string add_node(const std::string& list, const std::string& node);

struct AttemptRow {
    std::int64_t id = 0, trial = 0;
    int number = 0;
    std::string tag, node, state;
    std::optional<std::int64_t> job_id;
    double submitted_at = 0;
    std::optional<std::int64_t> pilot;  // set: a job step of that pilot (mode = pilots), not a job of its own
};

struct MetricRow {
    std::int64_t id = 0, evaluation = 0;
    std::string dataset, command, tag, state;
    int submissions = 0, failures = 0;
    double estimate_s = 0;
    std::optional<std::int64_t> job_id;
    std::string after_jobs;             // what its newest submission was chained to
    std::vector<std::int64_t> trials;   // the trials it waits for (not a column: metric_trials)
};

// "a.id, a.trial, ..." for a SELECT (alias "" for none), and the row from a statement whose
// first columns are that list.
std::string eval_columns(std::string_view alias = "");
EvalInfo eval_from(const store::Statement& q);
std::string trial_columns(std::string_view alias = "");
TrialRow trial_from(const store::Statement& q);
std::string attempt_columns(std::string_view alias = "");
AttemptRow attempt_from(const store::Statement& q);
std::string metric_columns(std::string_view alias = "");
MetricRow metric_from(const store::Statement& q);

// This database's instance id (created with the schema): part of every job's tag.
std::string instance_id(store::Database& db);

}  // namespace acme::evalsched
