// What the evaluation adapters (acme-eval-lmeval, acme-eval-opencompass; man
// acme-eval-adapters(1)) share: the shard arithmetic of the suite contract, bounded file reads,
// the contract's result.json, and running the harness as a child whose output goes to the
// trial's log. Pure except for the file and process helpers at the end.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace acme::adapters {

// A refusal the adapter prints as one line ("acme-eval-lmeval: <what>: <what to do>") before
// exiting non-zero: a bad argument, a harness output that is missing or malformed.
class AdapterError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Shard i of n of a dataset of `samples` samples covers [begin, end): floor(i*N/n) up to
// floor((i+1)*N/n), the suite contract (evalsched-suite(5)), so shards 2i and 2i+1 of 2n cover
// shard i of n exactly. Throws AdapterError for i outside [0, n) or n < 1.
struct Range {
    long begin = 0, end = 0;
    long size() const { return end - begin; }
};
Range shard_range(long samples, int shard, int num_shards);

// One metric's aggregate over a set of samples: mean = sum / count. Adding two shards' Means
// gives the whole dataset's mean exactly (what shard aggregation needs).
struct Mean {
    double sum = 0;
    long count = 0;
    void add(double value, long n = 1) { sum += value, count += n; }
    double value() const { return count ? sum / static_cast<double>(count) : 0; }
};

// Suite groups (evalsched-suite(5) GROUPS): a group's score from its leaves' scores, as lm-eval
// combines them (aggregate_metric_list in the group's yaml): per metric, the mean over the
// leaves weighted by each leaf's sample count (weight_by_size) or the plain mean. Only metrics
// every leaf reports are combined; the others are listed in `dropped` ("<metric> (not in every
// leaf)"). AdapterError for no leaves, a leaf without a positive sample count under
// weight_by_size, or no metric common to all leaves.
struct LeafScores {
    std::string name;
    std::map<std::string, double> scores;
    long samples = 0;  // 0: unknown
};
std::map<std::string, double> group_scores(const std::vector<LeafScores>& leaves, bool weight_by_size, std::vector<std::string>* dropped = nullptr);

// The contract's result file: {"scores": {...}, "samples": N, ...extra}. Written atomically
// (a temporary file renamed over result.json), so a reader never sees half of it.
struct Result {
    std::map<std::string, double> scores;
    std::optional<long> samples;
    std::vector<std::string> unsupported;   // metrics the adapter could not aggregate, and why
    std::vector<std::string> approximate;   // why scores recombined from shards differ from one whole run's
    std::string harness;                    // "lm-evaluation-harness", "opencompass"
    std::vector<std::string> sources;       // the harness files the scores came from
    // Per score, what the harness's own table shows beside it: "measure", "filter", "version",
    // "n_shot", "stderr", "mode" (those it gives); evalsched report prints them.
    nlohmann::json details = nlohmann::json::object();
};
std::string result_json(const Result& r);
void write_result(const std::string& dir, const Result& r);

// At most max_bytes of a regular file (not a symlink); AdapterError naming the file otherwise.
std::string read_file(const std::string& path, std::size_t max_bytes);
// Regular files under dir (recursively, no symlinks followed) whose name matches the glob
// (fnmatch), sorted by path.
std::vector<std::string> find_files(const std::string& dir, const std::string& glob);
// Immediate subdirectories of dir, sorted.
std::vector<std::string> subdirs(const std::string& dir);

// Runs argv (argv[0] looked up on PATH) with stdout and stderr inherited and waits for it.
// Returns its exit status (128 + signal when it died of one); AdapterError when it cannot be
// started (the harness is not installed: the message says to install it or set `setup`).
int run_harness(const std::vector<std::string>& argv);

// "a,b,c" -> {"a", "b", "c"}, empty items dropped.
std::vector<std::string> split_list(std::string_view text, char sep = ',');

}  // namespace acme::adapters
