// evalschedd's own SQLite file (DESIGN.md "Stores"): its schema as a numbered migration list,
// the reads and writes of the run-time priors, and the reads other commands make of it
// (gpuacct's timeline), so the schema has one owner. v1 holds the priors; v2 on add
// evaluations, trials, attempts and results.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/store/database.hpp"
#include "common/store/migrations.hpp"
#include "common/util/install_paths.hpp"

namespace acme::store {

inline constexpr std::string_view kDefaultEvalschedDb = paths::kEvalschedDb;

std::span<const Migration> evalsched_migrations();

// Opens (creating if needed) evalschedd's database and brings its schema up to date.
Database open_evalsched_store(const std::string& path);

// One finished trial piece: `seconds` of inference over `fraction` of the dataset.
struct PriorRun {
    std::string dataset;
    std::string size_class;
    int gpus = 1;
    double seconds = 0;
    double fraction = 1;
    std::string checkpoint;
    std::string node;
    double finished_at = 0;  // Unix seconds
};

// One checkpoint copied from shared storage onto a node.
struct ModelLoad {
    std::string node;
    double bytes = 0;
    double seconds = 0;
    std::string checkpoint;
    double finished_at = 0;
};

// One trial's startup (v12): the seconds its command ran beyond the inference its parts
// reported (run.json's end - start minus the sum of result.json's inference_s): harness init
// and the model load from the node-local copy, not the staging copy (model_loads has that).
struct StartupRun {
    std::string size_class;
    int gpus = 1;
    double seconds = 0;
    std::string checkpoint;
    std::string node;
    double finished_at = 0;
};

void record_prior_run(Database& db, const PriorRun& run);
void record_model_load(Database& db, const ModelLoad& load);
void record_startup(Database& db, const StartupRun& startup);

// The newest `per_key` runs of every (dataset, size_class, gpus), oldest first within a key,
// which is the order PriorBook::add_run expects (it keeps the newest).
std::vector<PriorRun> recent_prior_runs(Database& db, int per_key = 20);
// The newest `per_node` stagings of every node, oldest first within a node.
std::vector<ModelLoad> recent_model_loads(Database& db, int per_node = 20);

// The newest `per_key` startups of every (size_class, gpus), oldest first within a key.
std::vector<StartupRun> recent_startups(Database& db, int per_key = 20);

// The newest window of every table above: what the scheduler plans with and what a
// submission's trials are sized by (evalsched::PriorBook::add_window takes it; the store
// returns rows and knows nothing of the planner).
struct PriorWindow {
    std::vector<PriorRun> runs;
    std::vector<ModelLoad> loads;
    std::vector<StartupRun> startups;
};
PriorWindow recent_priors(Database& db, int per_key = 20);

// Deletes runs beyond the newest `keep` per key, so the table stays the size of the window.
int prune_prior_runs(Database& db, int keep = 100);

// One trial attempt that reached slurmctld, as the timeline of gpuacct's report shows it.
struct AttemptSpan {
    std::string evaluation;  // "<run>/<checkpoint>", e.g. "run7/step-12000"
    std::string trial;       // the trial's key
    std::string node, state;
    std::optional<long long> job_id;
    int gpus = 0;
    double submitted = 0, ended = 0;  // Unix seconds; ended 0 while it runs
};

// Every submitted attempt, oldest submission first, read from evalschedd's file without
// writing to it (other commands read it while the daemon runs, and never migrate it). Throws
// std::runtime_error, one line naming the file, when it is not an evalschedd store.
std::vector<AttemptSpan> read_attempt_timeline(const std::string& path);

}  // namespace acme::store
