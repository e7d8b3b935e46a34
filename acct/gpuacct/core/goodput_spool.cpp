#include "acct/gpuacct/core/goodput_spool.hpp"

#include <algorithm>
#include <array>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "acct/gpuacct/core/goodput_runs.hpp"
#include "common/store/spool_goodput.hpp"

namespace acme::acct {
namespace {

std::string_view first_word(std::string_view state) { return state.substr(0, state.find(' ')); }

// A run's fault as the spool tells it: a diagnosis of that restart, or a stall verdict the
// sampler acted on (as the record's reader decides for slurmdbd's runs, goodput_runs.cpp).
bool run_faulted(std::int64_t restart, std::span<const Diagnosis> diagnoses, std::span<const Stall> stalls) {
    return std::any_of(diagnoses.begin(), diagnoses.end(), [&](const Diagnosis& d) { return d.restart == restart; }) ||
           std::any_of(stalls.begin(), stalls.end(), [&](const Stall& s) {
               return s.restart == restart && !s.withdrawn && s.action != "none";
           });
}

}  // namespace

Goodput spool_goodput(const Job& job, std::span<const Diagnosis> diagnoses, std::span<const Stall> stalls,
                      std::optional<int> idle_gpus, double now, bool notes) {
    const std::int64_t last = job.restarts;
    GoodputRun run;
    run.submit = job.submit;
    run.start = job.start;
    // A live state has no end yet, whatever an older row left in end_time.
    const auto state = first_word(job.state);
    run.end = state == "RUNNING" || state == "PENDING" || state == "SUSPENDED" ? 0 : job.end;
    run.failed = failed_state(state);
    run.gpus = job_gpus(job);
    run.idle_gpus = idle_gpus;
    // The newest run's diagnosis (the first node's, in file order) and its stall verdict.
    for (const Diagnosis& d : diagnoses) {
        if (d.restart != last) continue;
        run.failed = true;
        if (run.category.empty()) {
            run.category = d.category;
            run.reason = d.reason;
        }
    }
    for (const Stall& s : stalls) {
        if (s.restart != last || s.withdrawn) continue;
        run.stall_since = std::min(run.stall_since.value_or(s.since), s.since);
        if (s.action != "none") run.failed = true;
    }
    Goodput g = compute_goodput(std::span<const GoodputRun>(&run, 1), now, notes);
    if (last <= 0) return g;

    // A requeue chain: its earlier runs are not held. Their faults are known (each restart's
    // diagnosis or acted verdict), their hours are not.
    g.runs = static_cast<int>(last) + 1;
    g.runs_not_held = static_cast<int>(last);
    for (std::int64_t r = 0; r < last; ++r) g.failures += run_faulted(r, diagnoses, stalls);
    // Slurm gives a requeued job a new submit time: the newest run's wait is the recovery from
    // the fault before it, or a queue wait after a requeue that was not a fault's.
    if (run_faulted(last - 1, diagnoses, stalls)) {
        g.recovery_s = g.queued_s;
        g.queued_s = 0.0;
    }
    g.ettr.reset();  // the wall time from the first submission is not held
    if (notes)
        g.unknown.push_back(fmt::format("runs 0 to {} are not held by the node spools (they keep a job's last run): their "
                                        "running time, waits and work redone are unknown; the pieces are run {}'s",
                                        last - 1, last));
    return g;
}

namespace {

// One job into a sum, its stall verdicts and idle GPUs looked up in what read_goodput_side read.
void add_job(ClusterGoodputSum& sum, const store::GoodputSide& side, const Job& job, std::span<const Diagnosis> diagnoses,
             double now) {
    // No idle GPU of the newest run: none was idle when the job has telemetry (its node rows
    // name GPU ids, written as its sampler started); unknown when it has none.
    std::optional<int> idle = job.gpu_ids > 0 ? std::optional<int>(0) : std::nullopt;
    if (const auto gpus = side.idle_gpus_of(job.job_id); !gpus.empty())
        idle = static_cast<int>(std::count_if(gpus.begin(), gpus.end(), [&](const auto& gpu) {
            return gpu.second <= 0 || gpu.second >= job.start;  // an earlier run's GPU sampled last before this run began
        }));
    sum.add(spool_goodput(job, diagnoses, side.stalls_of(job.job_id), idle, now, false));
}

}  // namespace

ClusterGoodput spool_cluster_goodput(const std::string& dir, const SpoolSet& data, const JobFilter& filter, double now) {
    const store::GoodputSide side = store::read_goodput_side(dir);
    std::unordered_map<std::int64_t, std::vector<Diagnosis>> diagnoses;
    for (const auto& d : data.diagnoses) diagnoses[d.job_id].push_back(d);
    ClusterGoodputSum sum;
    for (const auto& job : data.jobs) {
        if (!matches(job, filter)) continue;
        const auto d = diagnoses.find(job.job_id);
        add_job(sum, side, job, d == diagnoses.end() ? std::span<const Diagnosis>() : std::span<const Diagnosis>(d->second), now);
    }
    return sum.result();
}

ClusterGoodput stream_spool_goodput(const std::string& dir, ReadOptions read, const JobFilter& filter, double now,
                                    SpoolScan& scan) {
    const store::GoodputSide side = store::read_goodput_side(dir);
    read.diagnoses = true;
    read.node_rows = false;
    read.full_jobs = !filter.users.empty() || !filter.accounts.empty() || !filter.partitions.empty();
    const size_t parts = std::max(1u, std::thread::hardware_concurrency());
    std::vector<ClusterGoodputSum> sums(parts);
    scan = scan_spools(dir, read, parts, [&](size_t part, Job& job, std::span<const Diagnosis> diagnoses) {
        if (!matches(job, filter)) return;
        add_job(sums[part], side, job, diagnoses, now);
    });
    for (size_t part = 1; part < parts; ++part) sums[0].append(sums[part]);
    return sums[0].result();
}

}  // namespace acme::acct
