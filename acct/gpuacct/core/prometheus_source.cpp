#include "acct/gpuacct/core/prometheus_source.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/store/spool_gpu.hpp"

namespace acme::acct::prometheus {
namespace {

using nlohmann::json;

// One GpuSummary row per (job, node, GPU): the labels every sampler series carries.
constexpr const char* kBy = "hpc_job, Hostname, gpu";

// The subquery's resolution: a second (as fine as any scrape interval: the means are then
// weighted by time), coarser past kMaxPoints points a series over a long run.
constexpr std::int64_t kMaxPoints = 2000;

// Ids per query: a regex of a few hundred ids keeps the URL well under any proxy's limit.
constexpr std::size_t kBatch = 200;

// The GPU series carry the node and GPU only; the job is on acme_job_gpu_info (gputrace(8)),
// present while the job holds the GPU. Joined inside a subquery, each point of a GPU series
// counts for the job that held the GPU at that moment: a range longer than a job's run (the
// batch's longest) takes nothing of the jobs before or after it on the same GPU.
// `step_s` is the subquery's resolution.
std::string joined(const char* metric, const std::string& selector, std::int64_t range_s, std::int64_t step_s) {
    return fmt::format("({} * on(Hostname, gpu) group_left(hpc_job) acme_job_gpu_info{{{}}})[{}s:{}s]", metric,
                       selector, range_s, step_s);
}

std::string over(const char* fn, const char* metric, const std::string& selector, std::int64_t range_s,
                 std::int64_t step_s) {
    return fmt::format("{}({})", fn, joined(metric, selector, range_s, step_s));
}

// A counter's rise over the range: max - min, as the spool's energy (last - first reading of a
// counter that only grows) and ECC delta.
std::string rise(const char* metric, const std::string& selector, std::int64_t range_s, std::int64_t step_s) {
    return fmt::format("max by ({}) ({} - {})", kBy, over("max_over_time", metric, selector, range_s, step_s),
                       over("min_over_time", metric, selector, range_s, step_s));
}

std::string grouped(const char* agg, const char* fn, const char* metric, const std::string& selector,
                    std::int64_t range_s, std::int64_t step_s) {
    return fmt::format("{} by ({}) ({})", agg, kBy, over(fn, metric, selector, range_s, step_s));
}

std::optional<std::int64_t> integer_label(const json& metric, const char* name) {
    const auto it = metric.find(name);
    if (it == metric.end() || !it->is_string()) return std::nullopt;
    const auto& text = it->get_ref<const std::string&>();
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
    return value;
}

// Prometheus writes sample values as strings ("70", "NaN", "+Inf"); only finite ones count.
std::optional<double> sample_value(const json& value) {
    if (!value.is_array() || value.size() != 2) return std::nullopt;
    const json& v = value[1];
    double d = 0;
    if (v.is_string()) {
        const auto& text = v.get_ref<const std::string&>();
        if (text.empty() || text.size() > 64) return std::nullopt;
        char* end = nullptr;
        d = std::strtod(text.c_str(), &end);
        if (end != text.c_str() + text.size()) return std::nullopt;
    } else if (v.is_number()) {
        d = v.get<double>();
    } else {
        return std::nullopt;
    }
    // Beyond int64 no count, byte or joule figure is real, and llround would be undefined.
    if (!std::isfinite(d) || std::fabs(d) > 9.0e15) return std::nullopt;
    return d;
}

std::string clipped(const std::string& text) { return text.size() > 200 ? text.substr(0, 200) + "..." : text; }

}  // namespace

std::int64_t subquery_step(std::int64_t range_s) {
    return std::max<std::int64_t>(1, (range_s + kMaxPoints - 1) / kMaxPoints);
}

std::vector<Query> build_queries(std::span<const std::int64_t> job_ids, std::int64_t range_s) {
    std::string ids;
    for (const auto id : job_ids) ids += fmt::format("{}{}", ids.empty() ? "" : "|", id);
    const std::string sel = fmt::format("hpc_job=~\"{}\"", ids);
    const std::int64_t r = std::max<std::int64_t>(range_s, 1);
    const std::int64_t st = subquery_step(r);
    return {
        // Scrapes, not points: the info series is the job's own, so its raw samples count.
        {Stat::samples, fmt::format("sum by ({}) (count_over_time(acme_job_gpu_info{{{}}}[{}s]))", kBy, sel, r)},
        {Stat::util_avg, grouped("avg", "avg_over_time", "DCGM_FI_DEV_GPU_UTIL", sel, r, st)},
        {Stat::util_max, grouped("max", "max_over_time", "DCGM_FI_DEV_GPU_UTIL", sel, r, st)},
        {Stat::mem_max, grouped("max", "max_over_time", "DCGM_FI_DEV_FB_USED", sel, r, st)},
        {Stat::mem_total, grouped("max", "max_over_time", "DCGM_FI_DEV_FB_TOTAL", sel, r, st)},
        {Stat::energy, rise("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", sel, r, st)},
        {Stat::power_avg, grouped("avg", "avg_over_time", "DCGM_FI_DEV_POWER_USAGE", sel, r, st)},
        {Stat::power_max, grouped("max", "max_over_time", "DCGM_FI_DEV_POWER_USAGE", sel, r, st)},
        {Stat::temp_max, grouped("max", "max_over_time", "DCGM_FI_DEV_GPU_TEMP", sel, r, st)},
        {Stat::xids, grouped("max", "max_over_time", "acme_gpu_xid_events_total", sel, r, st)},
        {Stat::ecc, rise("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", sel, r, st)},
    };
}

std::string query_target(const std::string& expr) { return "/api/v1/query?query=" + util::url_encode(expr); }

Collector::Collector(std::span<const std::int64_t> job_ids) : jobs_(job_ids.begin(), job_ids.end()) {
    std::sort(jobs_.begin(), jobs_.end());
}

GpuSummary& Collector::row(const Key& key) {
    auto it = std::lower_bound(rows_.begin(), rows_.end(), key, [](const auto& r, const Key& k) { return r.first < k; });
    if (it == rows_.end() || it->first != key) {
        GpuSummary s;
        s.job_id = key.job_id;
        s.node = key.node;
        s.gpu = key.gpu;
        s.so_far = true;
        it = rows_.insert(it, {key, std::move(s)});
    }
    return it->second;
}

std::string Collector::add(Stat stat, std::string_view body) {
    const json answer = json::parse(body, nullptr, false);
    if (answer.is_discarded()) return "not JSON";
    if (!answer.is_object()) return "not a Prometheus answer";
    const auto status = answer.find("status");
    if (status == answer.end() || !status->is_string()) return "not a Prometheus answer (no status)";
    if (*status != "success") {
        const auto error = answer.find("error");
        const auto type = answer.find("errorType");
        return fmt::format("query refused: {}{}", type != answer.end() && type->is_string() ? type->get<std::string>() + ": " : "",
                           error != answer.end() && error->is_string() ? clipped(error->get<std::string>()) : "no reason given");
    }
    const auto data = answer.find("data");
    if (data == answer.end() || !data->is_object()) return "not a Prometheus answer (no data)";
    const auto type = data->find("resultType");
    const auto result = data->find("result");
    if (type == data->end() || *type != "vector" || result == data->end() || !result->is_array())
        return "not an instant vector";
    // Checked whole before any row changes: a bad answer adds nothing.
    struct Point {
        Key key;
        double value;
    };
    std::vector<Point> points;
    for (const auto& series : *result) {
        if (!series.is_object()) return "not an instant vector";
        const auto metric = series.find("metric");
        const auto value = series.find("value");
        if (metric == series.end() || !metric->is_object() || value == series.end()) return "not an instant vector";
        const auto job = integer_label(*metric, "hpc_job");
        const auto gpu = integer_label(*metric, "gpu");
        const auto host = metric->find("Hostname");
        if (!job || !gpu || *gpu > 1'000'000 || host == metric->end() || !host->is_string() || host->get_ref<const std::string&>().empty())
            continue;
        if (!std::binary_search(jobs_.begin(), jobs_.end(), *job)) continue;
        const auto v = sample_value(*value);
        if (!v) continue;
        points.push_back({{*job, host->get<std::string>(), static_cast<int>(*gpu)}, *v});
    }
    for (const auto& [key, v] : points) {
        GpuSummary& s = row(key);
        const auto whole = static_cast<std::int64_t>(std::llround(v));
        switch (stat) {
            case Stat::samples: s.samples = whole; break;
            case Stat::util_avg: s.util_avg = v; break;
            case Stat::util_max: s.util_max = v; break;
            // DCGM's FB_* are MiB; the spool and GpuSummary keep bytes.
            case Stat::mem_max: s.mem_max = static_cast<std::int64_t>(std::llround(v * 1048576.0)); break;
            case Stat::mem_total: s.mem_total = static_cast<std::int64_t>(std::llround(v * 1048576.0)); break;
            case Stat::energy: s.energy_mj = whole; break;
            // POWER_USAGE is W; GpuSummary keeps mW.
            case Stat::power_avg: s.power_avg_mw = v * 1000.0; break;
            case Stat::power_max: s.power_max_mw = static_cast<std::int64_t>(std::llround(v * 1000.0)); break;
            case Stat::temp_max: s.temp_max = whole; break;
            case Stat::xids: s.xids = whole; break;
            case Stat::ecc: s.ecc_uncorrected = whole; break;
        }
    }
    return "";
}

std::vector<GpuSummary> Collector::summaries() const {
    std::vector<GpuSummary> out;
    out.reserve(rows_.size());
    for (const auto& [key, s] : rows_) {
        out.push_back(s);
        GpuSummary& r = out.back();
        // A GPU with no utilisation scraped has no samples to judge, as in the spool.
        if (!r.util_avg || !r.util_max) r.samples = 0;
        r.verdict = r.samples > 0 ? store::gpu_verdict(r.util_avg, r.util_max) : "no-data";
    }
    return out;
}

std::vector<GpuSummary> running_summaries(const Getter& get, std::span<const RunningJob> jobs, double now,
                                          std::string& error) {
    std::vector<RunningJob> started;
    for (const auto& j : jobs)
        if (j.start > 0 && j.job_id > 0) started.push_back(j);
    // Newest first, so each batch's range (its oldest job's elapsed time) fits its jobs closely.
    std::sort(started.begin(), started.end(), [](const RunningJob& a, const RunningJob& b) { return a.start > b.start; });
    std::vector<GpuSummary> out;
    for (std::size_t first = 0; first < started.size(); first += kBatch) {
        const std::size_t last = std::min(started.size(), first + kBatch);
        std::vector<std::int64_t> ids;
        for (std::size_t i = first; i < last; ++i) ids.push_back(started[i].job_id);
        // The range is the batch's longest elapsed time; the join to acme_job_gpu_info keeps
        // each job to the points while it held the GPU, whoever used the GPU before. The info
        // series names the job id only, not the run: a requeued job whose previous run was
        // scraped within the range mixes that run's numbers into its own. Requeues are rare and
        // the numbers are "so far"; the record at the job's end (slurmdbd) has the run's own.
        const double oldest = started[last - 1].start;
        const auto range_s = static_cast<std::int64_t>(std::ceil(std::max(1.0, now - oldest)));
        Collector collector(ids);
        for (const auto& q : build_queries(ids, range_s)) {
            const auto response = get(query_target(q.expr));
            if (!response.error.empty()) {
                error = response.error;
                return {};
            }
            const std::string problem = collector.add(q.stat, response.body);
            if (response.status != 200) {
                // Prometheus explains a refused query in JSON; anything else (a proxy's page) is
                // the status alone.
                // A 404 is a server without Prometheus' API there (node_exporter 1.6 and newer
                // answer unknown paths so; older ones with their landing page: "not JSON").
                const bool explained = problem.starts_with("query refused");
                error = fmt::format("HTTP {}{}", response.status,
                                    explained                ? ": " + problem
                                    : response.status == 404 ? std::string(" (is this Prometheus' URL?)")
                                                             : std::string());
                return {};
            }
            if (!problem.empty()) {
                // Something answered that is not Prometheus' API (a node_exporter's or a
                // proxy's page): most likely a wrong URL.
                error = problem.starts_with("not ") ? problem + " (is this Prometheus' URL?)" : problem;
                return {};
            }
        }
        auto rows = collector.summaries();
        out.insert(out.end(), std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()));
    }
    return out;
}

}  // namespace acme::acct::prometheus
