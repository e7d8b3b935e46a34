// A running job's GPU numbers so far, from the site's Prometheus: the DCGM-named series the
// samplers publish through node_exporter's textfile collector (gputrace(8), PROMETHEUS
// METRICS), joined to the job by acme_job_gpu_info and summarised over the run's elapsed time
// by instant queries of *_over_time over that join (a subquery), grouped
// by (hpc_job, Hostname, gpu) into the GpuSummary rows a spool would give (so_far, the spool's
// units: bytes, mW, mJ; the spool's verdict rule). slurmdbd has no GPU numbers for a job until
// its end, and a login node cannot read the nodes' spools: this is how a user sees a running
// job's GPUs from anywhere.
//
// Pure but for the GET it is handed: the unit tests and the fuzz target feed answers directly.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "acct/gpuacct/core/spool_rows.hpp"
#include "common/util/http_get.hpp"

namespace acme::acct::prometheus {

// What one query's answer fills in a GpuSummary.
enum class Stat { samples, util_avg, util_max, mem_max, mem_total, energy, power_avg, power_max, temp_max, xids, ecc };

struct Query {
    Stat stat;
    std::string expr;  // PromQL
};

// One query per Stat for all `job_ids` (hpc_job=~"1|2|3"), each over the last `range_s` seconds,
// at subquery_step(range_s) seconds a point.
std::int64_t subquery_step(std::int64_t range_s);
std::vector<Query> build_queries(std::span<const std::int64_t> job_ids, std::int64_t range_s);

// "/api/v1/query?query=..." for an expression.
std::string query_target(const std::string& expr);

// Gathers the answers of one batch of queries into rows.
class Collector {
public:
    // Series of other jobs than these are ignored (a regex match is not trusted to be exact).
    explicit Collector(std::span<const std::int64_t> job_ids);

    // Adds one /api/v1/query answer to the rows. Returns "" or what is wrong, one phrase
    // (Prometheus' own error, "not JSON", ...), and then adds nothing. A series without the
    // hpc_job, Hostname or gpu label, or whose value is NaN or infinite, is skipped, not an error.
    std::string add(Stat stat, std::string_view body);

    // One row per (job, node, gpu), in that order; so_far set, verdict by the spool's rule.
    std::vector<GpuSummary> summaries() const;

private:
    struct Key {
        std::int64_t job_id;
        std::string node;
        int gpu;
        auto operator<=>(const Key&) const = default;
    };
    std::vector<std::int64_t> jobs_;  // sorted
    std::vector<std::pair<Key, GpuSummary>> rows_;  // sorted by key
    GpuSummary& row(const Key& key);
};

struct RunningJob {
    std::int64_t job_id = 0;
    double start = 0;  // epoch seconds of the current run's start
};

// GET target -> response; util::HttpClient::get in gpuacct.
using Getter = std::function<util::HttpResponse(const std::string& target)>;

// Every running job's rows, as of `now`. On the first failure (no answer, HTTP error, bad JSON,
// a query Prometheus refuses) returns no rows and sets `error` to one phrase; the caller lists
// the jobs without numbers. Jobs that have not started are left out.
std::vector<GpuSummary> running_summaries(const Getter& get, std::span<const RunningJob> jobs, double now,
                                          std::string& error);

}  // namespace acme::acct::prometheus
