#include "common/record/straggler.hpp"

#include <algorithm>

namespace acme::record {

std::vector<NodeSlowness> straggler_scores(const std::vector<NodeWork>& nodes) {
    std::vector<NodeSlowness> out;
    const bool by_sm = std::all_of(nodes.begin(), nodes.end(), [](const NodeWork& n) { return n.sm.has_value(); });
    std::vector<double> rates;
    for (const auto& n : nodes) {
        const auto& w = by_sm ? n.sm : n.util;
        if (w) rates.push_back(*w);
    }
    if (rates.size() < 2) return out;
    std::sort(rates.begin(), rates.end());
    const double typical = rates[rates.size() / 2];  // even: the upper (faster) middle node
    constexpr double kFloor = 1.0;
    if (typical < kFloor) return out;
    for (const auto& n : nodes) {
        const auto& w = by_sm ? n.sm : n.util;
        if (!w) continue;
        out.push_back({n.node, typical / std::max(*w, kFloor), *w, typical, by_sm ? "SM activity" : "GPU utilisation"});
    }
    return out;
}

}  // namespace acme::record
