// The labelled diagnosis corpus (tests/data/diagnosis/<reason>/<case>.log + optional .toml) and
// how the shipped rules score on it. Shared by the unit accuracy test, which asserts the floors,
// by tests/bench/diagnose, which prints the same figures for a person to read, and by
// acme-fallback-train, which learns the fallback's model from it at build time.
#pragma once

#include <array>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/diagnose/engine.hpp"

namespace acme::diagnose::corpus {

struct Case {
    std::filesystem::path log;
    std::string expected;      // the directory's name: a reason
    std::string text;          // the log; job.log views it (set by score(), as cases move)
    JobEnd job;                // what the sidecar adds
    std::string source, why;   // the sidecar's provenance: where the log came from, why this label
    std::string batch;         // the sidecar's `batch = "01"`: the first-sight batch it came in; empty: older
    // The sidecar's `known_miss = "..."`: why the log alone cannot tell this case from the
    // infrastructure failure it reads like (the thread found the cause elsewhere). Such a case
    // still counts in every figure; it is only listed apart from the false infrastructure calls
    // the accuracy test refuses.
    std::string known_miss;
};

// Every case under dir, in path order. Throws std::runtime_error naming the file when a
// directory is not a reason or a sidecar is not valid TOML.
std::vector<Case> load(const std::filesystem::path& dir);

inline constexpr std::array kCategories = {Category::infrastructure, Category::framework, Category::script,
                                           Category::unknown};

struct Score {
    int total = 0, reason_right = 0, category_right = 0;
    // confusion[expected][got], indexed like kCategories.
    std::array<std::array<int, kCategories.size()>, kCategories.size()> confusion{};
    std::map<std::string, std::pair<int, int>> by_reason;  // reason -> (right, total)
    std::vector<std::string> misses;                       // one line each
    std::vector<std::string> false_infrastructure;         // non-infrastructure cases called infrastructure
    std::vector<std::string> known_false_infrastructure;   // ... of them, those whose sidecar says known_miss
    // Infrastructure cases not called infrastructure whose sidecar says known_miss (the log alone
    // cannot tell them from the job's own failure).
    int known_missed_infrastructure = 0;

    double reason_accuracy() const { return total ? double(reason_right) / total : 0; }
    double category_accuracy() const { return total ? double(category_right) / total : 0; }
    // Of the cases diagnosed infrastructure, how many are; of those that are, how many were found.
    double infrastructure_precision() const;
    double infrastructure_recall() const;
    // Recall over the infrastructure cases the log can tell: the known misses left out.
    double infrastructure_recall_telling() const;
    int infrastructure_cases() const;
};

Score score(const Engine& engine, const std::vector<Case>& cases);

// The repository a case came from ("owner/name" of its source URL, or the host), or, for a
// case without a source, the case itself: the unit a leave-one-source-out score holds out.
std::string source_group(const Case& c);

// The cases of one batch (`batch = "NN"` in their sidecars).
std::vector<Case> of_batch(const std::vector<Case>& cases, const std::string& batch);
// Every batch named in cases, in order.
std::vector<std::string> batches(const std::vector<Case>& cases);

// A first-sight record (tests/data/first-sight/batch-NN.tsv): what the rules at `commit` said of
// each case of a batch before any rule was written for it. The record is written once, committed,
// and never rewritten: the score on it is the honest figure for logs nobody tuned a rule to.
struct FirstSight {
    std::string batch, commit;
    Score score;  // rebuilt from the rows (expected and got reasons); misses as recorded
    struct Row {
        std::string where;     // the case as recorded: "<expected reason>/<file name>"
        std::string expected, got, rule, evidence;  // rule "-": no rule decided
    };
    std::vector<Row> rows;  // in the record's order
};

// One verdict into the figures (what score() and parse_first_sight do per case); `where` names the
// case in the miss lists.
void tally(Score& s, const std::string& where, const ReasonInfo& expected, const ReasonInfo& got,
           const std::string& evidence, bool known_miss = false);

// The record as TSV: comment lines naming the batch and the commit, a header, one row per case
// (case, expected reason, got reason, their categories, the deciding rule).
std::string first_sight_tsv(const Engine& engine, const std::vector<Case>& cases, const std::string& batch,
                            const std::string& commit);
// Parses a record's text; throws std::runtime_error naming `name` and the line when it is not one.
FirstSight parse_first_sight(std::string_view text, std::string_view name);
// Reads a record back from its file (parse_first_sight of its text).
FirstSight read_first_sight(const std::filesystem::path& path);

// The figures as text: accuracies, the category confusion matrix (rows expected, columns got),
// infrastructure precision and recall, per-reason accuracy, then every miss.
std::string report(const Score& s);

}  // namespace acme::diagnose::corpus
