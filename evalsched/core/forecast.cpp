#include "evalsched/core/forecast.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "evalsched/core/duration.hpp"

namespace acme::evalsched {

Forecast forecast(std::span<const PendingTrial> pending, std::span<const HeldTrial> held, std::span<const NodeWindow> nodes) {
    Forecast out;
    struct Node {
        const NodeWindow* w;
        std::vector<double> free_at;  // one entry per GPU the forecast may use: when it comes free
        std::vector<std::string> staged;
    };
    std::vector<Node> seen;
    for (const auto& n : nodes) {
        if (!n.usable || n.total_gpus <= 0) continue;
        Node node{&n, std::vector<double>(static_cast<std::size_t>(std::clamp(n.free_gpus, 0, n.total_gpus)), 0.0), n.staged};
        seen.push_back(std::move(node));
    }
    std::sort(seen.begin(), seen.end(), [](const Node& a, const Node& b) { return a.w->node < b.w->node; });
    auto finish_of = [&](const std::string& checkpoint) -> CheckpointForecast& {
        auto [it, fresh] = out.by_checkpoint.try_emplace(checkpoint);
        if (fresh) it->second.finish_s = 0.0;
        return it->second;
    };
    auto ends_at = [](CheckpointForecast& f, double end) {
        if (f.finish_s) f.finish_s = std::max(*f.finish_s, end);
    };
    for (const auto& h : held) {
        const double remaining = std::max(0.0, h.remaining_s);
        auto& f = finish_of(h.checkpoint);
        ++f.trials_left;
        ends_at(f, remaining + h.metric_s);
        auto it = std::find_if(seen.begin(), seen.end(), [&](const Node& n) { return n.w->node == h.node; });
        if (it == seen.end()) continue;
        // Its GPUs come free when it ends, up to the node's size (slurmctld's count may lag).
        for (int g = 0; g < h.gpus && static_cast<int>(it->free_at.size()) < it->w->total_gpus; ++g) it->free_at.push_back(remaining);
        if (std::find(it->staged.begin(), it->staged.end(), h.checkpoint) == it->staged.end()) it->staged.push_back(h.checkpoint);
    }
    for (const auto& n : seen) out.gpus_seen += static_cast<int>(n.free_at.size());

    for (const PendingTrial* t : plan_order(pending)) {
        auto& f = finish_of(t->checkpoint);
        ++f.trials_left;
        if (t->conservative) ++f.guessed;
        Node* best = nullptr;
        double best_start = 0, best_end = 0;
        int most = 0;
        for (auto& n : seen) {
            most = std::max(most, static_cast<int>(n.free_at.size()));
            if (static_cast<int>(n.free_at.size()) < t->gpus) continue;
            std::sort(n.free_at.begin(), n.free_at.end());
            const double start = n.free_at[static_cast<std::size_t>(t->gpus - 1)];
            const bool staged = std::find(n.staged.begin(), n.staged.end(), t->checkpoint) != n.staged.end();
            const double end = start + t->startup_s + t->median_s + (staged ? 0 : t->stage_s);
            if (end > n.w->window_s) continue;
            if (!best || end < best_end) best = &n, best_start = start, best_end = end;
        }
        if (!best) {
            if (f.waiting++ == 0)
                f.waiting_reason = most < t->gpus
                                       ? fmt::format("a trial needs {} GPU{} on one node; at most {} free or held by evalsched on any node",
                                                     t->gpus, t->gpus == 1 ? "" : "s", most)
                                       : fmt::format("a trial needs {} on {} GPU{}; no node's backfill window is that long",
                                                     human_duration(t->startup_s + t->median_s), t->gpus, t->gpus == 1 ? "" : "s");
            f.finish_s.reset();
            continue;
        }
        (void)best_start;
        // Its GPUs: the earliest free ones, busy until it ends.
        for (int g = 0; g < t->gpus; ++g) best->free_at[static_cast<std::size_t>(g)] = best_end;
        if (std::find(best->staged.begin(), best->staged.end(), t->checkpoint) == best->staged.end()) best->staged.push_back(t->checkpoint);
        ends_at(f, best_end + t->metric_s);
    }
    return out;
}

}  // namespace acme::evalsched
