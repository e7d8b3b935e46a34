// lm-evaluation-harness's output files, read back into the suite contract's scores.
//
// Layout (lm_eval/loggers/evaluation_tracker.py, EvaluationTracker.save_results_aggregated and
// save_results_samples, EleutherAI/lm-evaluation-harness v0.4):
//   <output_path>/<model_name_sanitized>/results_<date_id>.json
//   <output_path>/<model_name_sanitized>/samples_<task>_<date_id>.jsonl   (with --log_samples)
// where date_id is datetime.now().isoformat() with ':' replaced by '-'. results_*.json holds
// "results": {task: {"<metric>,<filter>": value, "<metric>_stderr,<filter>": value, "alias": ..}},
// "group_subtasks": {group: [subtask, ...]}, "configs": {task: {"metric_list": [{"metric",
// "aggregation"}]}} and "n-samples". Each samples line is one document under one filter:
// {"doc_id", "filter", "metrics": [...], "<metric>": value, ...} (lm_eval/evaluator.py).
// Also here: the conventions of lm-eval the adapter writes to (its version, local-completions'
// URL) and the adapter's own shard record.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "evalsched/adapters/harness_files.hpp"

namespace acme::adapters::lmeval {

// "acc" under filter "none" is reported as "acc"; under another filter as "exact_match.strict-match".
std::string metric_name(std::string_view metric, std::string_view filter);

// Parses a results_<date_id>.json text; AdapterError when it is not a JSON object with "results".
nlohmann::json parse_results(std::string_view text, const std::string& file);

// The harness's own scores for `task` (a task or a group): every numeric "<metric>,<filter>"
// member of results[task] except the _stderr ones. AdapterError when the task is absent.
std::map<std::string, double> task_scores(const nlohmann::json& results, const std::string& task, const std::string& file);
// Beside each of task_scores' keys, what lm-eval's table prints for it: {"measure", "filter",
// "version", "n_shot", "stderr"} (those the results file gives).
nlohmann::json task_details(const nlohmann::json& results, const std::string& task);

// The leaf tasks of `task` (itself when it is no group), through group_subtasks, nested groups
// expanded.
std::vector<std::string> leaves(const nlohmann::json& results, const std::string& task);

// The aggregation each metric of a leaf uses (configs[leaf].metric_list), "mean" when unstated.
std::map<std::string, std::string> aggregations(const nlohmann::json& results, const std::string& leaf);

// The date_id of a results_<date_id>.json path; empty when the name has another shape.
std::string date_id_of(std::string_view results_path);

// Per-sample metrics of several shards, summed so that the whole dataset's mean is exact.
// Metrics whose aggregation is not "mean" (bleu, chrf, ter, f1 as a corpus F1, matthews_corrcoef,
// perplexity, weighted_perplexity, bits_per_byte, ...) cannot be recombined from shards' scores
// or per-sample values the harness logs as pairs: they are listed in `unsupported` instead.
struct Aggregate {
    std::map<std::string, Mean> metrics;
    std::set<std::string> unsupported;
    std::map<std::string, std::set<long>> docs;   // "<leaf>\t<filter>" -> doc_ids seen
    long samples() const;                          // distinct documents (under the first filter of each leaf)
};

// Adds one samples_<leaf>_<date_id>.jsonl text. AdapterError on a malformed line, or a document
// seen twice (shards overlap).
void add_samples(Aggregate& into, std::string_view jsonl, const std::string& leaf, const std::map<std::string, std::string>& aggregation,
                 const std::string& file);

// The oldest lm-eval the adapter runs: --samples, which selects a shard's documents, first
// shipped in 0.4.9 (lm_eval/__main__.py at v0.4.9; v0.4.8 has no such flag).
inline constexpr const char* kMinVersion = "0.4.9";

// Refuses (AdapterError, one line naming `where`) an lm-eval version older than kMinVersion, or
// a version string that is empty or not numbered ("0.4.13.dev0" and "0.4.9.1" are accepted).
void check_version(std::string_view version, const std::string& where);

// local-completions POSTs to its base_url as given (lm_eval/models/api_models.py), so it needs
// the completions endpoint: a server root (evalsched's {base_url}, http://127.0.0.1:PORT) gets
// /v1/completions, a URL ending in /v1 gets /completions, any other path is kept.
std::string completions_url(std::string_view base_url);

// Why a shard of `leaf` does not see the few-shot exemplars the whole run would, or nothing when
// it does. lm-eval's default sampler draws each document's exemplars from one Random(fewshot
// seed) in the order the run visits its documents (lm_eval/api/samplers.py ContextSampler.sample,
// called per document by lm_eval/api/task.py build_all_requests), so they depend on where the
// shard starts; first_n takes the first n every time, and 0-shot has none. Read from the run's
// results file: n-shot[leaf] (configs[leaf].num_fewshot otherwise) and
// configs[leaf].fewshot_config.sampler ("default" when absent).
std::string fewshot_dependence(const nlohmann::json& results, const std::string& leaf);

// The documents lm_eval scored for `leaf` (n-samples[leaf].effective); nothing when absent.
std::optional<long> effective_samples(const nlohmann::json& results, const std::string& leaf);

// OUT/evalsched-shard.json, written by `run` for a shard: the task, and which documents
// [begin, end) of how many (samples) it selected. AdapterError naming the file when it is not
// such a record (a member missing or of another type).
struct ShardRecord {
    long begin = 0, end = 0, samples = 0;
};
ShardRecord parse_shard_record(std::string_view text, const std::string& file);

}  // namespace acme::adapters::lmeval
