// The run-time priors in evalschedd's store (tables of schema v1 and v12): what finished trials
// measured, written as they end, and the window of the newest rows the planner learns from.
// Plain rows: evalsched::PriorBook (evalsched/core/priors.hpp) fills itself from them with
// add_window, so the store knows nothing of the planner.
#pragma once

#include <string>
#include <vector>

#include "common/store/database.hpp"

namespace acme::store {

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
// submission's trials are sized by (evalsched::PriorBook::add_window takes it).
struct PriorWindow {
    std::vector<PriorRun> runs;
    std::vector<ModelLoad> loads;
    std::vector<StartupRun> startups;
};
PriorWindow recent_priors(Database& db, int per_key = 20);

// Deletes runs beyond the newest `keep` per key, so the table stays the size of the window.
int prune_prior_runs(Database& db, int keep = 100);

}  // namespace acme::store
