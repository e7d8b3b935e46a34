#include "evalsched/core/window_fit.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "evalsched/core/duration.hpp"

namespace acme::evalsched {
namespace {

// As the planner's time_limit with the checkpoint already staged (the shortest it can be).
double limit_of(const Trial& t, double margin_fraction, double margin_s) {
    return std::ceil((t.startup_s + t.prior.p90_s * (1 + margin_fraction) + margin_s) / 60) * 60;
}

std::string datasets_of(const Trial& t) {
    std::string out;
    for (const auto& p : t.parts)
        if (out.find(p.dataset) == std::string::npos) out += (out.empty() ? "" : ", ") + p.dataset;
    return out;
}

}  // namespace

WindowFit fit_to_window(TrialSet& set, double window_s, double margin_fraction, double margin_s) {
    WindowFit fit;
    std::vector<std::pair<Trial*, double>> caps;  // trial, its new p90
    for (auto& t : set.trials) {
        const double limit = limit_of(t, margin_fraction, margin_s);
        if (limit <= window_s) continue;
        const bool sharded = t.parts.size() == 1 && t.parts.front().num_shards > 1;
        // The p90 whose limit is the window, in whole minutes down.
        const double room = (std::floor(window_s / 60) * 60 - t.startup_s - margin_s) / (1 + margin_fraction);
        if (t.prior.conservative() && room >= 60) {
            caps.emplace_back(&t, room);
            fit.notes.push_back(fmt::format("{}: no measured run time and no samples count, so its {} guess would need a {} --time, longer "
                                            "than any backfill window (bf_window={}): its --time is capped at {}; if it runs out, give "
                                            "samples = or prior = for it in the suite",
                                            datasets_of(t), human_duration(t.prior.p90_s), human_duration(limit), human_duration(window_s),
                                            human_duration(window_s)));
            continue;
        }
        fit.refusal = fmt::format("dataset {} needs a {} --time{} (p90 {} + margin), longer than any backfill window (bf_window={}), so it "
                                  "would never start: {}",
                                  datasets_of(t), human_duration(limit), sharded ? fmt::format(" even in {} shards", t.parts.front().num_shards) : "",
                                  human_duration(t.prior.p90_s), human_duration(window_s),
                                  sharded ? "ask the admin to raise bf_window" : "set shard = true for it in the suite (its command takes {shard} and {num_shards}), or ask the admin to raise bf_window");
        return fit;
    }
    for (auto& [t, p90] : caps) {
        t->prior.p90_s = p90;
        t->prior.median_s = std::min(t->prior.median_s, p90);
    }
    return fit;
}

}  // namespace acme::evalsched
