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
// temperature fitted on out-of-fold predictions.
#pragma once

#include <cstddef>
#include <map>
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
    // The time-split evaluation (tests/bench/diagnose) calibrates a threshold per batch on the
    // earlier batches' no-rule cases, each met by the model trained before it, to 0.8 of its
    // answers right: 0.90 from batch 08 to batch 14. The shipped model answers at that.
    static constexpr double kDefaultThreshold = 0.9;

    // Trains on the examples (at least two reasons). Deterministic. A positive `temperature`
    // skips the calibration folds and uses it (a leave-one-out evaluation borrows the full
    // model's, as calibrating each of hundreds of models would cost five trainings each).
    static FallbackModel train(const std::vector<FallbackExample>& examples, double temperature = 0);

    // The model as text (the rules.d/fallback.model format) and back. parse throws RuleError
    // naming `source` and the line when the text is not a model.
    std::string to_text() const;
    static FallbackModel parse(std::string_view text, std::string_view source);

    FallbackPrediction predict(std::string_view log, double threshold = kDefaultThreshold) const;

    const std::vector<std::string>& reasons() const noexcept { return reasons_; }
    double temperature() const noexcept { return temperature_; }
    std::size_t features() const noexcept { return weights_.size(); }

private:
    std::vector<double> scores(const std::vector<std::string>& features) const;

    std::vector<std::string> reasons_;                     // class index -> reason
    std::vector<double> bias_;                             // per class
    std::map<std::string, std::vector<double>> weights_;   // feature -> per-class weight
    double temperature_ = 1.0;
};

}  // namespace acme::diagnose
