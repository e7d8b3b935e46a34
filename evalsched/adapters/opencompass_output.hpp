// OpenCompass's output files, read back into the suite contract's scores.
//
// Layout (opencompass/cli/main.py: cfg.work_dir = <work_dir>/<timestamp>, the infer
// partitioner's out_dir <ts>/predictions/, the eval partitioner's <ts>/results/;
// opencompass/tasks/openicl_infer.py and openicl_eval.py write one file per model and dataset):
//   <work_dir>/<YYYYmmdd_HHMMSS>/predictions/<model_abbr>/<dataset_abbr>.json   {"0": {...}, ...}
//     (a dataset split by the size partitioner: <dataset_abbr>_0.json, _1.json, ...)
//   <work_dir>/<YYYYmmdd_HHMMSS>/results/<model_abbr>/<dataset_abbr>.json       {"accuracy": 45.6, ...}
// A dataset config may hold several subsets (mmlu: 57 abbrs, lukaemon_mmlu_*): each has its own
// files. Scores are OpenCompass's own, in its units (accuracy in percent).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "evalsched/adapters/harness_files.hpp"

namespace acme::adapters::opencompass {

// The numeric top-level members of a results/<abbr>/<dataset>.json ("details" and other
// non-numbers skipped). AdapterError when it is not a JSON object, or holds an "error".
std::map<std::string, double> parse_result(std::string_view text, const std::string& file);

// The number of predictions in a predictions/<abbr>/<dataset>.json (an object keyed "0", "1", ...).
long count_predictions(std::string_view text, const std::string& file);

// Whether a metric is a mean over samples, so that subsets and shards recombine by sample-
// weighted averaging (accuracy, acc, exact_match, em, pass@k, ...). Others (bleu, rouge, judge
// scores) are reported unsharded and never recombined.
bool mean_metric(std::string_view name);

// One subset (one dataset abbr) of one run: its scores and how many samples they cover.
struct Subset {
    std::string abbr;
    std::map<std::string, double> scores;
    long samples = 0;
};

// Subsets of every part (shards) into the dataset's scores: for each metric, the sample-weighted
// mean over every subset of every part ("<metric>"), and for several subsets also OpenCompass's
// summarizer default, the unweighted mean of the subsets ("<metric>_naive_average"; only
// unsharded). Metrics that are no mean, in a run of several parts or subsets, go to unsupported.
Result combine(const std::vector<std::vector<Subset>>& parts);

// The newest <YYYYmmdd_HHMMSS> directory under a work dir; AdapterError when there is none.
std::string newest_run(const std::string& work_dir);

}  // namespace acme::adapters::opencompass
