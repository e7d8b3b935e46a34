// Trials: the units evalsched submits. One per dataset by default; a dataset whose prior is
// longer than the shard limit is split into shards (when its command allows it), and datasets
// too short to pay for their own model load are bundled into one trial (when the suite has a
// bundle_command). Each trial knows its checkpoint, GPUs, prior, rendered command, and the CPU
// metric jobs that wait for it.
#pragma once

#include <string>
#include <vector>

#include "evalsched/core/priors.hpp"
#include "evalsched/core/suite.hpp"

namespace acme::evalsched {

struct Checkpoint {
    std::string name;         // e.g. "run7/step-12000": names trials and output dirs
    std::string staged_path;  // where the node-local copy lives; fills {checkpoint}
    std::string output_root;  // fills {output} as <root>/<dataset>[/shard-<i>-of-<n>]
    ModelSpec model;
};

struct TrialPart {
    std::string dataset;
    int shard = 0;
    int num_shards = 1;
    double fraction() const { return 1.0 / num_shards; }
};

struct Trial {
    std::string id;  // "<checkpoint>/<dataset>", "<checkpoint>/<dataset>#<i>of<n>", "<checkpoint>/bundle-<k>"
    std::string checkpoint;
    std::vector<TrialPart> parts;
    int gpus = 1;
    Estimate prior;            // inference (and preprocessing) of every part, one load excluded
    double startup_s = 0;      // once per trial: framework init + weights from the staged copy (PriorBook::startup_seconds)
    std::string command;       // rendered, ready for sbatch --wrap
    double metric_s = 0;       // the longest metric job this trial unlocks, for ordering
};

struct MetricJob {
    std::string id;                       // "<checkpoint>/<dataset>:metric"
    std::string dataset;
    std::string command;                  // rendered; empty when the dataset scores in-trial
    std::vector<std::string> after;       // trial ids it waits for (every shard)
    double estimate_s = 0;
};

struct TrialSet {
    std::vector<Trial> trials;
    std::vector<MetricJob> metrics;
    // Suite groups: one CPU job per group (id "<checkpoint>/<group>:group"), after every trial
    // holding a piece of one of its leaves, that combines the leaves' scores into the group's
    // (group_metric_command). Apart from `metrics`, whose datasets are the suite's datasets: a
    // group is no dataset, nothing runs it, and evalsched-sim scores the leaves only.
    std::vector<MetricJob> group_metrics;
    double total_gpu_seconds() const;  // sum of gpus x (startup + median)
};

struct TrialOptions {
    // Split a shardable dataset whose median exceeds this into ceil(median / limit) shards.
    double shard_above_s = 1800;
    int max_shards = 64;
    // Bundle datasets whose p90 is below this (a trial start costs startup_s; below ~4x that,
    // the load dominates) into trials of about bundle_target_s.
    double bundle_below_s = 120;
    double bundle_target_s = 600;
};

// Options sized to a cluster: shards and bundles no longer than a third of each GPU's fair
// share of the work (LPT is near-optimal when every GPU gets several trials, Coffman & Sethi
// 1976), but not so short that startup dominates. Startup is the learned one
// (PriorBook::startup_seconds), the cost model's guess until a trial has been measured.
TrialOptions options_for(const Suite& suite, const PriorBook& priors, const ModelSpec& model, int cluster_gpus);

TrialSet make_trials(const Suite& suite, const Checkpoint& checkpoint, const PriorBook& priors, const TrialOptions& options = {});

// Suite groups: appends to set.group_metrics the job of each of the suite's groups, after the
// trials of its leaves already in `set` (make_trials calls it last). The group's command reads
// the leaves' own outputs, not their metric jobs' result.json, so it waits for inference only.
void add_group_metrics(TrialSet& set, const Suite& suite, const Checkpoint& checkpoint, const CostModel& cost);

// The trials of a newly submitted evaluation, as evalschedd stores them: shards and bundles
// sized to the cluster's usable GPUs (options_for, what evalsched-sim measures), or the fixed
// TrialOptions defaults while the GPUs are not known yet (cluster_gpus 0: the scheduler has
// not seen the nodes once). Throws std::invalid_argument for a negative GPU count.
TrialSet trials_for_submission(const Suite& suite, const Checkpoint& checkpoint, const PriorBook& priors, int cluster_gpus);

// Re-sharding a trial that has not started: shard i of n covers samples floor(i*N/n) ..
// floor((i+1)*N/n) (evalsched-suite(5)), so shards factor*i .. factor*i+factor-1 of factor*n
// cover exactly the same samples. Returns the pieces (prior divided evenly, commands rendered
// for the new shard numbers), or the trial alone when it cannot be split: a bundle, a dataset
// without shard = true, factor < 2, or more pieces than samples.
std::vector<Trial> split_trial(const Trial& trial, const Suite& suite, const Checkpoint& checkpoint, int factor);

}  // namespace acme::evalsched
