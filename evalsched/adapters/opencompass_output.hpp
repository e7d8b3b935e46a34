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

// How a metric of OpenCompass's evaluators recombines over subsets and shards, by its key
// (the evaluators of the shipped configs at OpenCompass a5acc4bb, 0.5.3):
//   mean: a mean over samples, recombined sample-weighted, exactly: accuracy (AccEvaluator,
//     AccwithDetailsEvaluator, Gsm8kEvaluator, MATHVerifyEvaluator), score (BBHEvaluator,
//     TriviaQAEvaluator, NQEvaluator, EMEvaluator, TheoremQAEvaluatorV3, MBPPEvaluator),
//     humaneval_pass@k (HumanEvalEvaluator: the mean over problems of the pass@k estimate);
//   count: a number of samples, recombined by summing: MBPPEvaluator's pass, timeout, failed,
//     wrong_answer;
//   other: corpus-level (RougeEvaluator's rouge1/2/L, BLEU, judge scores, anything unknown):
//     reported only from one subset run whole, never recombined (shard = false in the suite).
enum class MetricKind { mean, count, other };
MetricKind metric_kind(std::string_view name);

// The dataset abbrs of the config OpenCompass resolved and dumped to <ts>/configs/<ts>_<pid>.py
// (opencompass/cli/main.py: cfg.dump): every abbr='...' of the top-level `datasets` list, in
// order. AdapterError naming the file when it holds no datasets list or no abbr in it.
std::vector<std::string> dumped_dataset_abbrs(std::string_view config_text, const std::string& file);

// What one trial's part of a dataset must hold: the adapter's evalsched-part.json, written by
// `run` before OpenCompass starts. samples = 0: the dataset's size was not given (no count check).
struct PartRecord {
    std::string dataset;
    int shard = 0, num_shards = 1;
    long begin = 0, end = 0, samples = 0;
};
std::string part_record_json(const PartRecord& r);
// AdapterError naming the file for anything but the adapter's record (missing or mistyped members).
PartRecord parse_part_record(std::string_view text, const std::string& file);

// One subset (one dataset abbr) of one run: its scores and how many samples they cover.
struct Subset {
    std::string abbr;
    std::map<std::string, double> scores;
    long samples = 0;
};

// Subsets of every part (shards) into the dataset's scores: for each metric, the sample-weighted
// mean over every subset of every part ("<metric>"), and for several subsets also OpenCompass's
// summarizer default, the unweighted mean of the subsets ("<metric>_naive_average"; only
// unsharded); counts summed. Other metrics, in a run of several parts or subsets, go to
// unsupported.
Result combine(const std::vector<std::vector<Subset>>& parts);

// A run is complete when every expected abbr has predictions (and, with `results`, a results
// file) and the predictions number `samples` (when > 0). AdapterError otherwise: one line naming
// the dataset, the missing abbrs and the counts, for OpenCompass exits 0 when a task fails
// (its runners only log it: opencompass/runners/local.py), so a partial run is no error to it.
struct Found {
    std::string abbr;
    long predictions = -1;  // -1: no predictions file
    bool results = false;
};
void check_complete(const std::string& dataset, const std::string& run_dir, const std::vector<Found>& found, long samples, bool results);

// The newest <YYYYmmdd_HHMMSS> directory under a work dir; AdapterError when there is none.
std::string newest_run(const std::string& work_dir);

// One row of the summary OpenCompass writes after evaluating, <ts>/summary/summary_<ts>.csv
// (opencompass/summarizers/default.py: "dataset,version,metric,mode,<model abbr>...": the
// dataset's abbr, a hash of its prompt config, the metric, gen or ppl).
struct SummaryRow {
    std::string dataset, version, metric, mode;
};
// The rows of such a file; lines that do not have the four columns are skipped (the summarizer
// also writes blank separator lines and group headings).
std::vector<SummaryRow> parse_summary(std::string_view csv);

// The report's details of a dataset's scores (result.json "details": evalsched report's Version
// and Mode columns): for each score of `r`, the version and mode the summary gives for that
// metric of every one of `abbrs`, where they all agree ("-" and "" are no value).
nlohmann::json summary_details(const Result& r, const std::vector<SummaryRow>& rows, const std::vector<std::string>& abbrs);

}  // namespace acme::adapters::opencompass
