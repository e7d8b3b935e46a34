#include "acct/gpuacct/core/report_aggregates.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

#include "acct/gpuacct/core/aggregate.hpp"

namespace acme::acct {

std::vector<UtilHistogram> util_by_type(std::span<const Job> jobs, std::span<const GpuSummary> summaries, double now) {
    const auto use = gpu_use_by_job(summaries);
    std::map<std::string, UtilHistogram> by_type;
    for (const auto& job : jobs) {
        const auto u = use.find(job.job_id);
        if (u == use.end() || !u->second.util_avg) continue;
        const std::string type = job.job_type.empty() ? "other" : job.job_type;
        auto& h = by_type[type];
        h.type = type;
        const double gh = job_gpu_hours(job, now);
        const int at = std::clamp(static_cast<int>(std::floor(*u->second.util_avg)), 0, 100);
        ++h.jobs;
        h.gpu_hours += gh;
        h.gpu_hours_at[static_cast<std::size_t>(at)] += gh;
    }
    std::vector<UtilHistogram> out;
    for (auto& [type, h] : by_type) out.push_back(std::move(h));
    return out;
}

std::vector<WasteRow> waste_by(WasteKey key, std::span<const Job> jobs, std::span<const GpuSummary> summaries,
                               double now, std::size_t top) {
    // Each summary is one GPU of the job on one node, held for the whole run.
    std::unordered_map<std::int64_t, std::pair<double, double>> wasted;  // job -> idle, low GPU-hours
    std::unordered_map<std::int64_t, const Job*> by_id;
    for (const auto& job : jobs) by_id.emplace(job.job_id, &job);
    for (const auto& s : summaries) {
        const auto j = by_id.find(s.job_id);
        if (j == by_id.end() || (s.verdict != "idle" && s.verdict != "low-util")) continue;
        const double hours = job_elapsed(*j->second, now) / 3600.0;
        auto& w = wasted[s.job_id];
        (s.verdict == "idle" ? w.first : w.second) += hours;
    }
    std::unordered_map<std::string, WasteRow> rows;
    for (const auto& job : jobs) {
        if (job_gpus(job) == 0) continue;
        const auto& text = job.text();
        std::string name = key == WasteKey::user ? text.user : text.account;
        if (name.empty()) name = key == WasteKey::user && text.uid >= 0 ? std::to_string(text.uid) : "(unknown)";
        auto& r = rows[name];
        r.name = name;
        ++r.jobs;
        r.gpu_hours += job_gpu_hours(job, now);
        if (const auto w = wasted.find(job.job_id); w != wasted.end()) {
            r.idle_gpu_hours += w->second.first;
            r.low_gpu_hours += w->second.second;
        }
    }
    std::vector<WasteRow> out;
    out.reserve(rows.size());
    for (auto& [name, r] : rows) out.push_back(std::move(r));
    std::sort(out.begin(), out.end(), [](const WasteRow& a, const WasteRow& b) {
        const double wa = a.idle_gpu_hours + a.low_gpu_hours, wb = b.idle_gpu_hours + b.low_gpu_hours;
        return wa != wb ? wa > wb : a.name < b.name;
    });
    if (out.size() > top) out.resize(top);
    return out;
}

XidSummary xid_summary(std::span<const GpuEvent> events, double from, double to, int buckets) {
    XidSummary out;
    out.buckets = std::max(buckets, 1);
    // The report's period; an open end is the first or last event.
    double first = 0, last = 0;
    bool any = false;
    for (const auto& e : events) {
        if (e.kind != "xid") continue;
        first = any ? std::min(first, e.ts) : e.ts;
        last = any ? std::max(last, e.ts) : e.ts;
        any = true;
    }
    out.from = from > 0 ? std::min(from, any ? first : from) : first;
    out.to = to > 0 ? std::max(to, last) : last;
    if (!any) return out;
    const double span = std::max(out.to - out.from, 1.0);
    std::map<std::pair<std::string, int>, XidBucket> cells;
    std::map<std::int64_t, std::pair<std::int64_t, std::set<std::string>>> codes;
    for (const auto& e : events) {
        if (e.kind != "xid") continue;
        const int b = std::clamp(static_cast<int>((e.ts - out.from) / span * out.buckets), 0, out.buckets - 1);
        auto& c = cells[{e.node, b}];
        c.node = e.node;
        c.bucket = b;
        ++c.count;
        ++c.codes[e.code];
        auto& code = codes[e.code];
        ++code.first;
        code.second.insert(e.node);
    }
    for (auto& [key, c] : cells) out.cells.push_back(std::move(c));
    for (auto& [code, v] : codes) out.codes.push_back({code, v.first, {v.second.begin(), v.second.end()}});
    std::stable_sort(out.codes.begin(), out.codes.end(), [](const XidCode& a, const XidCode& b) { return a.count > b.count; });
    return out;
}

}  // namespace acme::acct
