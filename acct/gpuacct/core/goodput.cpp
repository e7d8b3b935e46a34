#include "acct/gpuacct/core/goodput.hpp"

#include "acct/gpuacct/core/sacct_time.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace acme::acct {
namespace {

struct Window {
    double from = 0, to = 0;
    size_t failed = 0;  // the run whose fault it is
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

Goodput compute_goodput(std::span<const GoodputRun> runs, double now, bool notes) {
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
            if (notes)
                g.unknown.push_back(
                    i + 1 < runs.size()
                        ? fmt::format("run {} failed and run {} does not say which checkpoint it resumed from (or when that "
                                      "checkpoint was written): the work redone is unknown",
                                      i, i + 1)
                        : fmt::format("run {} failed and no run resumed after it: the work lost since its last checkpoint is unknown",
                                      i));
            continue;
        }
        redo.push_back({*from, end_of(runs[i], now), i});
    }

    // Each run's running time cut at every window edge; each piece is stalled (its own
    // verdict's window wins: that time was lost to the hang whatever was redone), else lost
    // (inside a redo window), else kept; the idle GPUs' share of a kept piece is idle.
    double kept = 0, lost = 0, stalled = 0, idle = 0;
    bool idle_unknown = false;
    const auto cause_of = [&](size_t run) -> GoodputCause& {
        const std::string category = runs[run].category.empty() ? "unknown" : runs[run].category;
        const std::string reason = runs[run].reason.empty() ? (runs[run].stall_since ? "stall" : "unknown") : runs[run].reason;
        for (auto& c : g.causes)
            if (c.category == category && c.reason == reason) return c;
        return g.causes.emplace_back(GoodputCause{category, reason, 0, 0});
    };
    for (size_t i = 0; i < runs.size(); ++i) {
        const GoodputRun& r = runs[i];
        if (r.start <= 0) continue;
        const double end = end_of(r, now);
        g.running_s += std::max(0.0, end - r.start);
        std::optional<Window> stall;
        if (r.stall_since) stall = Window{std::max(r.start, *r.stall_since), end, i};
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
            const auto in_redo = std::find_if(redo.begin(), redo.end(), [&](const Window& w) { return w.contains(mid); });
            if (stall && stall->contains(mid)) {
                stalled += b - a;
                cause_of(i).stalled_s += b - a;
            } else if (in_redo != redo.end()) {
                lost += b - a;
                cause_of(in_redo->failed).lost_s += b - a;
            } else {
                run_kept += b - a;
            }
        }
        if (r.idle_gpus && r.gpus > 0) {
            const double share = std::clamp(static_cast<double>(*r.idle_gpus) / r.gpus, 0.0, 1.0);
            idle += run_kept * share;
            run_kept -= run_kept * share;
        } else if (run_kept > 0) {
            idle_unknown = true;
            if (notes) g.unknown.push_back(fmt::format("run {} has no GPU telemetry: its idle GPUs, if any, are counted as kept", i));
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

// sacct's [D-]HH:MM:SS, as every duration gpuacct prints; the share of the wall time beside it.
std::string duration(const std::optional<double>& s, double wall) {
    if (!s) return "unknown";
    return fmt::format("{:>11}  {:5.1f}%", format_elapsed(*s), wall > 0 ? 100 * *s / wall : 0.0);
}

}  // namespace

std::string render_goodput(std::int64_t job_id, const Goodput& g) {
    std::string out = fmt::format("Goodput of job {} ({} run{}, {} failure{}):\n", job_id, g.runs, g.runs == 1 ? "" : "s",
                                  g.failures, g.failures == 1 ? "" : "s");
    out += fmt::format("  ETTR             {}\n", g.ettr ? fmt::format("{:.2f}", *g.ettr) : "unknown");
    out += fmt::format("  wall             {:>11}\n", format_elapsed(g.wall_s));
    out += fmt::format("  queued           {}\n", duration(g.queued_s, g.wall_s));
    out += fmt::format("  running, kept    {}\n", duration(g.kept_s, g.wall_s));
    out += fmt::format("  lost (redone)    {}\n", duration(g.lost_s, g.wall_s));
    out += fmt::format("  recovery         {}\n", duration(g.recovery_s, g.wall_s));
    out += fmt::format("  stalled          {}\n", duration(g.stalled_s, g.wall_s));
    out += fmt::format("  GPUs idle        {}\n", duration(g.idle_s, g.wall_s));
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

void ClusterGoodputSum::add(const Goodput& g) {
    constexpr double kHour = 3600;
    ClusterGoodput& c = sum_;
    ++c.jobs;
    c.runs += g.runs;
    c.failures += g.failures;
    c.runs_not_held += g.runs_not_held;
    c.jobs_partly_held += g.runs_not_held > 0;
    const double handed = g.running_s * g.gpus / kHour;
    c.handed_out_gpu_h += handed;
    c.queued_h += g.queued_s.value_or(0) / kHour;
    c.recovery_h += g.recovery_s.value_or(0) / kHour;
    c.stalled_gpu_h += g.stalled_s.value_or(0) * g.gpus / kHour;
    if (!g.kept_s) {
        c.unsplit_gpu_h += handed - g.stalled_s.value_or(0) * g.gpus / kHour;
    } else {
        c.kept_gpu_h += *g.kept_s * g.gpus / kHour;
        c.lost_gpu_h += g.lost_s.value_or(0) * g.gpus / kHour;
        c.idle_gpu_h += g.idle_s.value_or(0) * g.gpus / kHour;
    }
    for (const auto& cause : g.causes) add_cause(cause, g.gpus);
}

void ClusterGoodputSum::add_cause(const GoodputCause& cause, double gpus) {
    auto& causes = sum_.causes;
    auto it = std::find_if(causes.begin(), causes.end(),
                           [&](const GoodputCause& x) { return x.category == cause.category && x.reason == cause.reason; });
    if (it == causes.end()) it = causes.insert(causes.end(), GoodputCause{cause.category, cause.reason, 0, 0});
    it->lost_s += cause.lost_s * gpus;
    it->stalled_s += cause.stalled_s * gpus;
}

void ClusterGoodputSum::append(const ClusterGoodputSum& other) {
    ClusterGoodput& c = sum_;
    const ClusterGoodput& o = other.sum_;
    c.handed_out_gpu_h += o.handed_out_gpu_h;
    c.kept_gpu_h += o.kept_gpu_h;
    c.lost_gpu_h += o.lost_gpu_h;
    c.stalled_gpu_h += o.stalled_gpu_h;
    c.idle_gpu_h += o.idle_gpu_h;
    c.unsplit_gpu_h += o.unsplit_gpu_h;
    c.recovery_h += o.recovery_h;
    c.queued_h += o.queued_h;
    c.jobs += o.jobs;
    c.runs += o.runs;
    c.failures += o.failures;
    c.runs_not_held += o.runs_not_held;
    c.jobs_partly_held += o.jobs_partly_held;
    for (const auto& cause : o.causes) add_cause(cause, 1);  // GPU-seconds already
}

ClusterGoodput ClusterGoodputSum::result() const {
    ClusterGoodput c = sum_;
    std::stable_sort(c.causes.begin(), c.causes.end(), [](const GoodputCause& a, const GoodputCause& b) {
        return a.lost_s + a.stalled_s > b.lost_s + b.stalled_s;
    });
    return c;
}

std::string render_cluster_goodput(const ClusterGoodput& c) {
    const auto share = [&](double h) { return c.handed_out_gpu_h > 0 ? 100 * h / c.handed_out_gpu_h : 0.0; };
    std::string out = fmt::format("Goodput: {} jobs, {} runs, {} failures\n", c.jobs, c.runs, c.failures);
    out += fmt::format("  GPU-hours handed out   {:10.1f}\n", c.handed_out_gpu_h);
    for (const auto& [name, h] : {std::pair{"kept", c.kept_gpu_h}, {"lost (redone)", c.lost_gpu_h}, {"stalled", c.stalled_gpu_h},
                                  {"GPUs idle", c.idle_gpu_h}, {"not split", c.unsplit_gpu_h}})
        out += fmt::format("    {:<20} {:10.1f}  {:5.1f}%\n", name, h, share(h));
    out += fmt::format("  waits (job-hours)      queued {:.1f}, recovery {:.1f}\n", c.queued_h, c.recovery_h);
    if (c.runs_not_held > 0)
        out += fmt::format("  not held: {} earlier run{} of {} requeued job{} (node spools keep a job's last run): their GPU time,\n"
                           "    waits and work redone are unknown and in none of the hours above\n",
                           c.runs_not_held, c.runs_not_held == 1 ? "" : "s", c.jobs_partly_held, c.jobs_partly_held == 1 ? "" : "s");
    if (!c.causes.empty()) out += "  GPU-hours lost by cause (redone + stalled):\n";
    for (const auto& cause : c.causes)
        out += fmt::format("    {:<15} {:<24} {:10.1f}\n", cause.category, cause.reason, (cause.lost_s + cause.stalled_s) / 3600);
    return out;
}

nlohmann::json cluster_goodput_json(const ClusterGoodput& c) {
    nlohmann::json causes = nlohmann::json::array();
    for (const auto& cause : c.causes)
        causes.push_back({{"category", cause.category}, {"reason", cause.reason}, {"lost_gpu_h", cause.lost_s / 3600},
                          {"stalled_gpu_h", cause.stalled_s / 3600}});
    return {{"jobs", c.jobs}, {"runs", c.runs}, {"failures", c.failures}, {"handed_out_gpu_h", c.handed_out_gpu_h},
            {"kept_gpu_h", c.kept_gpu_h}, {"lost_gpu_h", c.lost_gpu_h}, {"stalled_gpu_h", c.stalled_gpu_h},
            {"idle_gpu_h", c.idle_gpu_h}, {"unsplit_gpu_h", c.unsplit_gpu_h}, {"queued_h", c.queued_h},
            {"recovery_h", c.recovery_h}, {"runs_not_held", c.runs_not_held}, {"jobs_partly_held", c.jobs_partly_held},
            {"causes", causes}};
}

}  // namespace acme::acct
