#include "acct/gpuacct/core/goodput.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace acme::acct {
namespace {

struct Window {
    double from = 0, to = 0;
    bool contains(double t) const { return t >= from && t < to; }
};

double end_of(const GoodputRun& r, double now) { return r.end > 0 ? r.end : now; }

// The work a failed run's successor redid: from the checkpoint it resumed from (the chain's
// first start for a fresh start) to the fault. nullopt: the records do not say where it resumed.
std::optional<double> redo_from(std::span<const GoodputRun> runs, size_t failed) {
    if (failed + 1 >= runs.size()) return std::nullopt;  // nothing resumed: which checkpoint is unknown
    const GoodputRun& next = runs[failed + 1];
    if (!next.resumed_from) return std::nullopt;
    if (next.resumed_from->empty()) return runs.front().start;
    return next.resumed_ckpt_ts;
}

}  // namespace

Goodput compute_goodput(std::span<const GoodputRun> runs, double now) {
    Goodput g;
    g.runs = static_cast<int>(runs.size());
    if (runs.empty()) return g;
    const double first_submit = runs.front().submit;
    const double last_end = end_of(runs.back(), now);
    g.wall_s = std::max(0.0, last_end - first_submit);
    g.gpus = runs.back().gpus;

    // Waits: before the first run, and between runs (recovery after a fault, a queue wait
    // after a requeue that was not one: an admin's or a preemption).
    double queued = (runs.front().start > 0 ? runs.front().start : last_end) - first_submit, recovery = 0;
    for (size_t i = 0; i + 1 < runs.size(); ++i) {
        if (runs[i].start <= 0) continue;
        const double resumed = runs[i + 1].start > 0 ? runs[i + 1].start : last_end;
        const double gap = std::max(0.0, resumed - end_of(runs[i], now));
        (runs[i].failed ? recovery : queued) += gap;
    }
    g.failures = static_cast<int>(std::count_if(runs.begin(), runs.end(), [](const GoodputRun& r) { return r.failed; }));
    g.queued_s = std::max(0.0, queued);
    g.recovery_s = recovery;

    // Redo windows of every fault, and whether any is unknown.
    std::vector<Window> redo;
    bool redo_unknown = false;
    for (size_t i = 0; i < runs.size(); ++i) {
        if (!runs[i].failed || runs[i].start <= 0) continue;
        const auto from = redo_from(runs, i);
        if (!from) {
            redo_unknown = true;
            g.unknown.push_back(
                i + 1 < runs.size()
                    ? fmt::format("run {} failed and run {} does not say which checkpoint it resumed from (or when that "
                                  "checkpoint was written): the work redone is unknown",
                                  i, i + 1)
                    : fmt::format("run {} failed and no run resumed after it: the work lost since its last checkpoint is unknown", i));
            continue;
        }
        redo.push_back({*from, end_of(runs[i], now)});
    }

    // Each run's running time cut at every window edge; each piece is stalled (its own
    // verdict's window wins: that time was lost to the hang whatever was redone), else lost
    // (inside a redo window), else kept; the idle GPUs' share of a kept piece is idle.
    double kept = 0, lost = 0, stalled = 0, idle = 0;
    bool idle_unknown = false;
    for (size_t i = 0; i < runs.size(); ++i) {
        const GoodputRun& r = runs[i];
        if (r.start <= 0) continue;
        const double end = end_of(r, now);
        std::optional<Window> stall;
        if (r.stall_since) stall = Window{std::max(r.start, *r.stall_since), end};
        std::vector<double> cuts{r.start, end};
        for (const auto& w : redo)
            for (double t : {w.from, w.to})
                if (t > r.start && t < end) cuts.push_back(t);
        if (stall) cuts.push_back(stall->from);
        std::sort(cuts.begin(), cuts.end());
        double run_kept = 0;
        for (size_t k = 0; k + 1 < cuts.size(); ++k) {
            const double a = cuts[k], b = cuts[k + 1], mid = (a + b) / 2;
            if (b <= a) continue;
            if (stall && stall->contains(mid)) stalled += b - a;
            else if (std::any_of(redo.begin(), redo.end(), [&](const Window& w) { return w.contains(mid); })) lost += b - a;
            else run_kept += b - a;
        }
        if (r.idle_gpus && r.gpus > 0) {
            const double share = std::clamp(static_cast<double>(*r.idle_gpus) / r.gpus, 0.0, 1.0);
            idle += run_kept * share;
            run_kept -= run_kept * share;
        } else if (run_kept > 0) {
            idle_unknown = true;
            g.unknown.push_back(fmt::format("run {} has no GPU telemetry: its idle GPUs, if any, are counted as kept", i));
        }
        kept += run_kept;
    }
    g.stalled_s = stalled;
    if (!idle_unknown) g.idle_s = idle;
    if (!redo_unknown) {
        g.lost_s = lost;
        g.kept_s = kept;
        if (g.wall_s > 0) g.ettr = kept / g.wall_s;
    }
    return g;
}

namespace {

std::string minutes(const std::optional<double>& s) { return s ? fmt::format("{:.1f} min", *s / 60) : "unknown"; }

}  // namespace

std::string render_goodput(std::int64_t job_id, const Goodput& g) {
    std::string out = fmt::format("Goodput of job {} ({} run{}, {} failure{}):\n", job_id, g.runs, g.runs == 1 ? "" : "s",
                                  g.failures, g.failures == 1 ? "" : "s");
    out += fmt::format("  ETTR             {}\n", g.ettr ? fmt::format("{:.2f}", *g.ettr) : "unknown");
    out += fmt::format("  wall             {}\n", minutes(g.wall_s));
    out += fmt::format("  queued           {}\n", minutes(g.queued_s));
    out += fmt::format("  running, kept    {}\n", minutes(g.kept_s));
    out += fmt::format("  lost (redone)    {}\n", minutes(g.lost_s));
    out += fmt::format("  recovery         {}\n", minutes(g.recovery_s));
    out += fmt::format("  stalled          {}\n", minutes(g.stalled_s));
    out += fmt::format("  GPUs idle        {}\n", minutes(g.idle_s));
    for (const auto& why : g.unknown) out += fmt::format("  note: {}\n", why);
    return out;
}

nlohmann::json goodput_json(const Goodput& g) {
    const auto value = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
    return {{"runs", g.runs},
            {"failures", g.failures},
            {"gpus", g.gpus},
            {"wall_s", g.wall_s},
            {"queued_s", value(g.queued_s)},
            {"kept_s", value(g.kept_s)},
            {"lost_s", value(g.lost_s)},
            {"recovery_s", value(g.recovery_s)},
            {"stalled_s", value(g.stalled_s)},
            {"idle_s", value(g.idle_s)},
            {"ettr", value(g.ettr)},
            {"unknown", g.unknown}};
}

}  // namespace acme::acct
