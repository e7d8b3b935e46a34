#include "evalsched/core/planner.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include <fmt/format.h>

#include "evalsched/core/duration.hpp"

namespace acme::evalsched {
namespace {
// "1 free GPU", "4 free GPUs": the hold reasons are read by people.
std::string free_gpus(int n) { return fmt::format("{} free GPU{}", n, n == 1 ? "" : "s"); }
}  // namespace

double time_limit(const PendingTrial& t, bool staged, const PlanOptions& o) {
    const double s = t.startup_s + t.p90_s * (1 + o.margin_fraction) + o.margin_s + (staged ? 0 : t.stage_s);
    // Whole minutes, as sbatch --time takes it: the limit fitted into a window is the one Slurm
    // gets, never up to 59 s longer (which would no longer fit before a reservation).
    return std::ceil(s / 60) * 60;
}

// Plan order: checkpoints first-come, then the longest critical path. Work on pointers so the
// inputs' order never matters: the plan is a function of the sets.
std::vector<const PendingTrial*> plan_order(std::span<const PendingTrial> trials) {
    std::vector<const PendingTrial*> order;
    for (const auto& t : trials) order.push_back(&t);
    std::sort(order.begin(), order.end(), [](const PendingTrial* a, const PendingTrial* b) {
        const double ka = a->startup_s + a->median_s + a->metric_s;
        const double kb = b->startup_s + b->median_s + b->metric_s;
        return std::tie(a->checkpoint_rank, a->checkpoint, kb, a->id) < std::tie(b->checkpoint_rank, b->checkpoint, ka, b->id);
    });
    return order;
}

Plan plan(std::span<const PendingTrial> trials, std::span<const NodeWindow> nodes, const PlanOptions& options) {
    Plan out;
    const std::vector<const PendingTrial*> order = plan_order(trials);

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
                why = fmt::format("needs {} on one node; the most free now is {}", free_gpus(t->gpus), widest_free);
            else
                why = fmt::format("needs a {} window (p90 {} + margin); the longest with {} is {}",
                                  human_duration(time_limit(*t, true, options)), human_duration(t->p90_s), free_gpus(t->gpus),
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

std::string pilot_key(const std::string& checkpoint, int gpus) { return fmt::format("{}#{}gpu", checkpoint, gpus); }

PilotAsk pilot_ask(const PilotRequest& r, double launch_s, double start_slack_s) {
    const double least = std::ceil((r.time_min_s + launch_s) / 60) * 60;
    const double limit = std::max(least, std::ceil((r.time_limit_s + launch_s) / 60) * 60);
    const double room = std::floor((r.window_s - start_slack_s) / 60) * 60;  // infinity stays so
    return {std::clamp(room, least, limit), limit};
}

double pilot_trial_limit(const PendingTrial& t, const PlanOptions& o) { return t.p90_s * (1 + o.margin_fraction) + o.margin_s; }

std::optional<std::size_t> pilot_next(std::span<const PendingTrial> trials, const std::string& checkpoint, int gpus,
                                      double remaining_s, const PlanOptions& options) {
    for (const PendingTrial* t : plan_order(trials)) {
        if (t->checkpoint != checkpoint || t->gpus != gpus) continue;
        if (pilot_trial_limit(*t, options) <= remaining_s) return static_cast<std::size_t>(t - trials.data());
    }
    return std::nullopt;
}

int tail_split_factor(const PendingTrial& next, double left_gpu_s, int serving_gpus, const TailOptions& o) {
    if (serving_gpus <= 0 || next.median_s <= 0) return 1;
    const double target = std::max(o.min_piece_s, o.share_fraction * left_gpu_s / serving_gpus);
    int factor = 1;
    while (factor < o.max_factor && next.median_s / factor > target && next.median_s / (2 * factor) >= o.min_piece_s) factor *= 2;
    return factor;
}

PilotPlan plan_pilots(std::span<const PendingTrial> trials, std::span<const NodeWindow> nodes,
                      const std::map<std::string, int>& serving, const PilotOptions& options) {
    PilotPlan out;
    const std::vector<const PendingTrial*> order = plan_order(trials);
    double longest = 0;
    // Per (checkpoint, GPUs), in plan order: trials left, the shortest in-pilot limit, and
    // the first trial's fields for startup and staging.
    struct Class {
        std::string key;
        const PendingTrial* first = nullptr;
        int trials = 0;
        double shortest = std::numeric_limits<double>::infinity();
        std::vector<std::string> ids;
        double longest = 0;  // the longest in-pilot limit
    };
    std::vector<Class> classes;
    for (const auto* t : order) {
        const double run = t->startup_s + t->median_s;
        out.total_work_gpu_s += t->gpus * run;
        longest = std::max(longest, run);
        const std::string key = pilot_key(t->checkpoint, t->gpus);
        auto it = std::find_if(classes.begin(), classes.end(), [&](const Class& c) { return c.key == key; });
        if (it == classes.end()) it = classes.insert(classes.end(), Class{key, t, 0, std::numeric_limits<double>::infinity(), {}});
        ++it->trials;
        it->shortest = std::min(it->shortest, pilot_trial_limit(*t, options.trial));
        it->longest = std::max(it->longest, pilot_trial_limit(*t, options.trial));
        it->ids.push_back(t->id);
    }

    struct Slot {
        const NodeWindow* w;
        int free;
        std::vector<std::string> local;  // staged, or being staged by a pilot of this plan
        std::vector<std::string> staged;
    };
    std::vector<Slot> slots;
    for (const auto& n : nodes) {
        if (!n.usable) continue;
        out.usable_gpus += n.total_gpus;
        if (n.free_gpus > 0) slots.push_back({&n, std::min(n.free_gpus, n.total_gpus), n.staged, n.staged});
    }
    std::sort(slots.begin(), slots.end(), [](const Slot& a, const Slot& b) { return a.w->node < b.w->node; });

    for (const Class& c : classes) {
        const PendingTrial& t = *c.first;
        auto served = serving.find(c.key);
        int wanted = c.trials - (served == serving.end() ? 0 : served->second);
        double widest = 0;
        while (wanted > 0) {
            auto has = [&](const std::vector<std::string>& v) { return std::find(v.begin(), v.end(), t.checkpoint) != v.end(); };
            Slot* best = nullptr;
            double best_min = 0;
            for (auto& s : slots) {
                if (s.free < t.gpus) continue;
                const double tmin = t.startup_s + (has(s.staged) ? 0 : t.stage_s) + c.shortest;
                widest = std::max(widest, s.w->window_s);
                if (tmin > s.w->window_s) continue;
                // The checkpoint local (or being copied) first; then the longest window, where a
                // pilot can take the most work; then the fullest node, then the name.
                if (!best || std::make_tuple(!has(s.local), -s.w->window_s, s.free) < std::make_tuple(!has(best->local), -best->w->window_s, best->free))
                    best = &s, best_min = tmin;
            }
            if (!best) break;
            const bool stages = !has(best->staged);
            // The cap stretches to the class's longest trial (issue 18: at 70B most trials are
            // longer than max_s; capped pilots skipped them until the end, so the longest ran
            // last and the makespan doubled). The window still bounds it.
            const double cap = std::max(options.max_s, best_min - c.shortest + c.longest);
            const double limit = std::max(best_min, std::min(best->w->window_s, cap));
            out.submit.push_back({best->w->node, t.checkpoint, t.gpus, best_min, limit, slurm_time(best_min), slurm_time(limit), stages,
                                  best->w->window_s - (stages ? t.stage_s : 0)});
            best->free -= t.gpus;
            if (!has(best->local)) best->local.push_back(t.checkpoint);
            --wanted;
        }
        if (wanted > 0 && (served == serving.end() || served->second == 0) &&
            std::none_of(out.submit.begin(), out.submit.end(), [&](const PilotRequest& r) { return pilot_key(r.checkpoint, r.gpus) == c.key; })) {
            const std::string why = fmt::format("no node has {} for a {} window (startup + the shortest trial); the longest is {}",
                                                free_gpus(t.gpus), human_duration(t.startup_s + c.shortest), human_duration(widest));
            for (const auto& id : c.ids) out.hold.push_back({id, why});
        }
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
