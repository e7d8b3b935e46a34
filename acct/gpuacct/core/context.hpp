// What one gpuacct command read: the jobs after every filter, what slurmdbd adds to them, node
// states. load.hpp fills it; the views (acct/gpuacct/views.hpp) show it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "acct/gpuacct/core/aggregate.hpp"
#include "acct/gpuacct/core/goodput.hpp"
#include "acct/gpuacct/core/job_detail.hpp"
#include "acct/gpuacct/core/slurmdbd_set.hpp"
#include "acct/gpuacct/core/spool_rows.hpp"

namespace acme::acct {

enum class ViewKind { jobs, failures, nodes, summary };

// Where the job records came from. Slurm's accounting is the normal path (any node, slurmdbd's
// PrivateData deciding what a user sees); node spools when a directory is named, when the site
// has no slurmdbd, or when it does not answer (then said once on stderr).
enum class Source { spool, slurmdbd };

inline std::string_view source_name(Source s) { return s == Source::slurmdbd ? "slurmdbd" : "spool"; }

struct SlurmNode {
    std::string name, state, reason;
};

// What slurmdbd's newest run of a job adds to the spools' model: sacct's filters (-q, -g, -k,
// -K, -M, -x) and the job view's time limit. Absent for a job read from the spools.
struct AccountedExtra {
    std::optional<double> time_limit_s;
    bool unlimited = false;
    std::string qos, cluster;
    std::int64_t gid = -1;
    std::uint32_t associd = 0;
};

// sacct's --units / --noconvert for the memory fields: 0 chooses the unit (sacct's default),
// 'K' .. 'P' fixes it, 'n' (--noconvert) prints the recorded unit unchanged.
struct Units {
    char unit = 0;
};

struct Context {
    SpoolSet data;
    std::vector<Job> jobs;  // after the filter
    double now = 0;
    bool allocations = false;  // -X: no step rows
    std::optional<std::vector<SlurmNode>> slurm_nodes;  // nullopt: slurmctld not reachable
    // --summary and --failures alone aggregate the jobs as they stream (load.cpp) and leave
    // `jobs` empty; unset, the views aggregate `jobs` (the HTML report holds every job anyway).
    std::optional<std::vector<SummaryRow>> summary;
    std::optional<std::vector<FailureRow>> failures;
    std::unordered_map<std::int64_t, AccountedExtra> accounted;
    std::map<GpmKey, GpmActivity> gpm;  // --detail only
    // -D from slurmdbd: `jobs` holds one entry per run (Job::restarts its run number), and the
    // GPU figures of each run come from that run's own record, by (job id, run).
    bool per_run = false;
    std::map<std::pair<std::int64_t, int>, GpuUse> run_use;
    Units units;
    // The HTML report: gpuacct goodput of the rows read (slurmdbd, or the spools: goodput_spool.hpp).
    std::optional<ClusterGoodput> goodput;
};

}  // namespace acme::acct
