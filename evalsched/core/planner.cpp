#include "evalsched/core/planner.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include <fmt/format.h>

#include "evalsched/core/duration.hpp"

namespace acme::evalsched {

double time_limit(const PendingTrial& t, bool staged, const PlanOptions& o) {
    return t.startup_s + t.p90_s * (1 + o.margin_fraction) + o.margin_s + (staged ? 0 : t.stage_s);
}

Plan plan(std::span<const PendingTrial> trials, std::span<const NodeWindow> nodes, const PlanOptions& options) {
    Plan out;
    // Work on copies so the inputs' order never matters: the plan is a function of the sets.
    std::vector<const PendingTrial*> order;
    for (const auto& t : trials) order.push_back(&t);
    std::sort(order.begin(), order.end(), [](const PendingTrial* a, const PendingTrial* b) {
        const double ka = a->startup_s + a->median_s + a->metric_s;
        const double kb = b->startup_s + b->median_s + b->metric_s;
        return std::tie(a->checkpoint_rank, a->checkpoint, kb, a->id) < std::tie(b->checkpoint_rank, b->checkpoint, ka, b->id);
    });

    struct Slot {
        const NodeWindow* w;
        int free;
        std::vector<std::string> staged;   // in node-local memory already
        std::vector<std::string> staging;  // copied by a trial this plan places there
    };
    std::vector<Slot> slots;
    for (const auto& n : nodes) {
        if (!n.usable) continue;
        out.usable_gpus += n.total_gpus;
        if (n.free_gpus > 0) slots.push_back({&n, std::min(n.free_gpus, n.total_gpus), n.staged, {}});
    }
    std::sort(slots.begin(), slots.end(), [](const Slot& a, const Slot& b) { return a.w->node < b.w->node; });

    double longest = 0;
    for (const auto* t : order) {
        const double run = t->startup_s + t->median_s;
        out.total_work_gpu_s += t->gpus * run;
        longest = std::max(longest, run);

        auto has = [&](const std::vector<std::string>& v) { return std::find(v.begin(), v.end(), t->checkpoint) != v.end(); };
        auto staged_on = [&](const Slot& s) { return has(s.staged); };
        auto local = [&](const Slot& s) { return has(s.staged) || has(s.staging); };
        Slot* best = nullptr;
        double best_limit = 0;
        int widest_free = 0;
        double longest_window = 0;
        for (auto& s : slots) {
            widest_free = std::max(widest_free, s.free);
            if (s.free < t->gpus) continue;
            longest_window = std::max(longest_window, s.w->window_s);
            const bool staged = staged_on(s);
            const double limit = time_limit(*t, staged, options);
            if (limit > s.w->window_s) continue;
            if (!best) {
                best = &s, best_limit = limit;
                continue;
            }
            // Checkpoint local (or being copied) first: every node that stages it costs a full
            // read from shared storage. Then the tightest window; then the fullest node.
            const auto key = std::make_tuple(!local(s), s.w->window_s, s.free);
            const auto best_key = std::make_tuple(!local(*best), best->w->window_s, best->free);
            if (key < best_key) best = &s, best_limit = limit;
        }
        if (!best) {
            std::string why;
            if (widest_free < t->gpus)
                why = fmt::format("needs {} free GPUs on one node; the most free now is {}", t->gpus, widest_free);
            else
                why = fmt::format("needs a {} window (p90 {} + margin); the longest with {} free GPUs is {}",
                                  human_duration(time_limit(*t, true, options)), human_duration(t->p90_s), t->gpus,
                                  human_duration(longest_window));
            out.hold.push_back({t->id, why});
            continue;
        }
        const bool stages = !staged_on(*best);
        out.submit.push_back({t->id, best->w->node, t->gpus, best_limit, slurm_time(best_limit), stages, t->conservative});
        best->free -= t->gpus;
        // Trials placed beside the one that stages it wait for the same copy, so they prefer
        // the node but their --time still includes stage_s.
        if (stages && !local(*best)) best->staging.push_back(t->checkpoint);
    }
    if (out.usable_gpus > 0) out.lower_bound_s = std::max(out.total_work_gpu_s / out.usable_gpus, longest);
    return out;
}

std::string format_plan(const Plan& p) {
    std::string s;
    for (const auto& x : p.submit)
        s += fmt::format("submit {} on {} gpus={} --time={}{}{}\n", x.trial, x.node, x.gpus, x.slurm_time,
                         x.stages_checkpoint ? " (stages checkpoint)" : "", x.conservative ? " (run time unknown: conservative estimate)" : "");
    for (const auto& h : p.hold) s += fmt::format("hold   {}: {}\n", h.trial, h.reason);
    s += fmt::format("lower bound {} = max(work {:.0f} GPU-s / {} GPUs, longest trial)\n", human_duration(p.lower_bound_s),
                     p.total_work_gpu_s, p.usable_gpus);
    return s;
}

}  // namespace acme::evalsched
