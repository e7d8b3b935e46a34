// Confirmed past failures (faultdiag --label) and the nearest-match lookup the engine falls
// back to when no rule decides. Loading them from a store is the caller's business.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/diagnose/signature.hpp"

namespace acme::diagnose {

struct LabelledFailure {
    std::int64_t job_id = 0;
    std::string reason;
    Signature signature;
};

struct HistoryMatch {
    const LabelledFailure* failure = nullptr;
    double similarity = 0;
};

class History {
public:
    // Below this Jaccard similarity two logs are not "the same failure".
    static constexpr double kDefaultThreshold = 0.5;

    explicit History(std::vector<LabelledFailure> failures, double threshold = kDefaultThreshold)
        : failures_(std::move(failures)), threshold_(threshold) {}

    // The most similar labelled failure at or above the threshold; ties go to the newest label
    // (the later entry), as the most recent judgement of an operator.
    std::optional<HistoryMatch> nearest(const Signature& signature) const noexcept;

    double threshold() const noexcept { return threshold_; }
    std::size_t size() const noexcept { return failures_.size(); }

private:
    std::vector<LabelledFailure> failures_;
    double threshold_;
};

}  // namespace acme::diagnose
