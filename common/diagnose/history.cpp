#include "common/diagnose/history.hpp"

namespace acme::diagnose {

std::optional<HistoryMatch> History::nearest(const Signature& signature) const noexcept {
    std::optional<HistoryMatch> best;
    if (signature.empty()) return best;
    for (const auto& failure : failures_) {
        double score = similarity(signature, failure.signature);
        if (score >= threshold_ && (!best || score >= best->similarity)) best = HistoryMatch{&failure, score};
    }
    return best;
}

}  // namespace acme::diagnose
