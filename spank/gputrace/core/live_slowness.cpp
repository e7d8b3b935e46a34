#include "spank/gputrace/core/live_slowness.hpp"

#include <algorithm>

#include "common/record/straggler.hpp"

namespace acme::telemetry {

std::optional<double> live_slowness(const std::vector<NodeState>& states, const std::vector<std::string>& expected,
                                    std::string_view self, double now, double fresh) {
    std::vector<record::NodeWork> work;
    for (const auto& s : states) {
        // A stale peer's rate is of another moment (or a node that left): not compared.
        if (!s.work_util || now - s.ts > fresh) continue;
        if (std::find(expected.begin(), expected.end(), s.node) == expected.end()) continue;
        work.push_back({s.node, s.work_util, s.work_sm});
    }
    for (const auto& score : record::straggler_scores(work))
        if (score.node == self) return score.score;
    return std::nullopt;
}

}  // namespace acme::telemetry
