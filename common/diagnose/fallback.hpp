// The learned fallback: a small linear classifier over a log tail's normalised words, for the
// logs no rule decides. It is trained at build time from the labelled corpus
// (tests/data/diagnosis), ships as rules.d/fallback.model, and answers only when its calibrated
// probability clears a threshold; below it the answer stays "unknown". It never decides a
// recovery: a fallback diagnosis always has action none, whatever its reason's default, because
// draining a node or requeueing a job needs a rule or a hardware signal behind it.
//
// Features are the words and word pairs of the lines a person would read (the error-looking
// lines and the last lines of the tail), lower-cased, with what differs between two runs of the
// same failure normalised away: numbers, hex, paths, PCI ids, addresses, ranks, timestamps.
// The model is a multinomial logistic regression trained by full-batch gradient descent (the
// same corpus gives the same model, bit for bit), its probabilities calibrated by one
// temperature fitted on out-of-fold predictions. The threshold it answers at is calibrated by the
// trainer (acme-fallback-train) and written into the model file.
//
// The model file (rules.d/fallback.model), tab-separated, one item a line:
//   acme-fallback-model  2           the format's version (1: no threshold line; read as 0.9)
//   temperature          0.6
//   threshold            0.9         version 2 only, at most once: the calibrated threshold
//   reason               NAME  BIAS  one per class, in class order
//   feature              WORDS CLASS:WEIGHT,...
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace acme::diagnose {

// The distinct features of a log, sorted.
std::vector<std::string> fallback_features(std::string_view log);

struct FallbackExample {
    std::string reason;  // a taxonomy reason
    std::string log;
    std::string group;   // for out-of-fold calibration: examples of one group are held out together
    std::vector<std::string> features;  // fallback_features(log), when the caller already has them
};

struct FallbackPrediction {
    std::string reason;   // "unknown" when no class clears the threshold
    double probability = 0;
    std::string best;     // the most probable reason, whether or not it cleared the threshold
    // The features that weighed most for `best` against the runner-up, heaviest first.
    std::vector<std::pair<std::string, double>> decided_by;
};

class FallbackModel {
public:
    // The threshold of a model that names none: a version 1 file, or a model just trained. The
    // version 1 models were shipped answering at 0.9, the value the time-split evaluation
    // (tests/bench/diagnose) calibrated from batch 08 to batch 14.
    static constexpr double kDefaultThreshold = 0.9;
    // The newest model file version this reader knows, and the one to_text writes.
    static constexpr int kFormatVersion = 2;

    // Trains on the examples (at least two reasons). Deterministic. A positive `temperature`
    // skips the calibration folds and uses it (a leave-one-out evaluation borrows the full
    // model's, as calibrating each of hundreds of models would cost five trainings each).
    static FallbackModel train(const std::vector<FallbackExample>& examples, double temperature = 0);

    // The model as text (the rules.d/fallback.model format, version kFormatVersion) and back.
    // parse reads versions 1 and 2 and throws RuleError naming `source` and the line when the
    // text is not a model (a newer version included).
    std::string to_text() const;
    static FallbackModel parse(std::string_view text, std::string_view source);

    // At `threshold`, or at the model's own when none is given.
    FallbackPrediction predict(std::string_view log, std::optional<double> threshold = std::nullopt) const;

    // The probability of each reason (indexed like reasons()) for a log's features.
    std::vector<double> probabilities(const std::vector<std::string>& features) const;
    // The features that weigh most for reason index `for_class` against `against`, heaviest
    // first, at most `most` of them.
    std::vector<std::pair<std::string, double>> decided_by(const std::vector<std::string>& features,
                                                           std::size_t for_class, std::size_t against,
                                                           std::size_t most = 8) const;

    const std::vector<std::string>& reasons() const noexcept { return reasons_; }
    double temperature() const noexcept { return temperature_; }
    std::size_t features() const noexcept { return weights_.size(); }
    // The threshold it answers at: its file's (the trainer's calibration), else kDefaultThreshold.
    double threshold() const noexcept { return threshold_; }
    // Whether the threshold came from the model file (version 2) rather than the default.
    bool calibrated() const noexcept { return calibrated_; }
    // The trainer's calibration; in (0, 1].
    void set_threshold(double threshold);

private:
    std::vector<double> scores(const std::vector<std::string>& features) const;

    std::vector<std::string> reasons_;                     // class index -> reason
    std::vector<double> bias_;                             // per class
    std::map<std::string, std::vector<double>> weights_;   // feature -> per-class weight
    double temperature_ = 1.0;
    double threshold_ = kDefaultThreshold;
    bool calibrated_ = false;
};

}  // namespace acme::diagnose
