// The learned fallback met as it would have met each batch of the corpus: for each first-sight
// record (tests/data/first-sight), a model trained only on the cases that existed before that
// batch (cases without a batch, and earlier batches), asked about the batch's cases no rule
// decided at first sight. Its answers are scored as "the recorded rules' answer, else the
// fallback's", so the figures are the first-sight ones with the fallback beside them.
//
// The threshold a split uses comes from training data only: the trials of the earlier batches
// (each met by the model trained before it), never from the batch being scored.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/diagnose/corpus.hpp"
#include "common/diagnose/fallback.hpp"

namespace acme::diagnose::corpus {

// The share of its answers the fallback's threshold is calibrated to get right. 0.8 until batch
// 18 (threshold 0.80: 25 of the 180 no-rule trials answered, 21 right); 0.7 since (0.50: 52
// answered, 38 right). A no-rule case left unknown is wrong whatever the threshold, the answer is
// shown as the model's guess with its probability and never drains or requeues, and the rules
// held out from their cases (tests/bench/diagnose) read better at 0.5 than at 0.8 with the same
// infrastructure precision (batches 12-18 left out: category 0.836 -> 0.855, reason 0.791 -> 0.800).
inline constexpr double kFallbackPrecision = 0.7;

// One case of a batch that no rule decided at first sight, and what the model trained before the
// batch says of it (whatever the threshold).
struct FallbackTrial {
    std::string batch, where, expected;  // as recorded
    std::string best;                    // the model's most probable reason ("unknown" is one)
    double probability = 0;
};

struct TimeSplit {
    std::string batch;
    std::size_t trained_on = 0;                  // cases before the batch
    std::shared_ptr<const FallbackModel> model;  // trained on them
    std::vector<FallbackTrial> trials;           // the batch's rows no rule decided
};

// The cases that existed before `batch` as training examples (an empty batch: every case).
std::vector<FallbackExample> examples_before(const std::vector<Case>& cases, const std::string& batch);

// A split per record, in the records' order. Throws std::runtime_error when a recorded case is
// not in the corpus.
std::vector<TimeSplit> time_splits(const std::vector<Case>& cases, const std::vector<FirstSight>& records);

// The lowest threshold (of 0.30, 0.35, ... 0.95) at which the trials' answers (best not "unknown",
// probability at or above it) are right often enough: (right + 1) / (answered + 2) >= precision,
// the +1/+2 keeping three lucky answers from passing for a calibration. 1.0 (never answer) when
// none is.
double calibrated_threshold(const std::vector<FallbackTrial>& trials, double precision);

// The records of a directory (its *.tsv files, in name order); none when it does not exist.
std::vector<FirstSight> read_first_sights(const std::filesystem::path& dir);

// The threshold acme-fallback-train writes into fallback.model: calibrated (kFallbackPrecision)
// on every record's trials, each met by the model trained before its batch, as the split of a
// batch after the last record would be. 1.0 (never answer) without records.
double trained_threshold(const std::vector<Case>& cases, const std::vector<FirstSight>& records);

// What a split's threshold gives on its own batch.
struct SplitScore {
    Score without, with;  // the record's verdicts; the same with the fallback's answers
    int answered = 0, right = 0;
};
SplitScore score_split(const FirstSight& record, const TimeSplit& split, double threshold);

}  // namespace acme::diagnose::corpus
