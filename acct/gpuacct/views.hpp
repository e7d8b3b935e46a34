// The four views of gpuacct, one file each (view_jobs.cpp, view_failures.cpp, view_nodes.cpp,
// view_summary.cpp). Fields are static so --format and --helpformat are checked before any
// spool is read: bad input never leaves partial output.
#pragma once

#include <map>
#include <optional>
#include <unordered_map>
#include <string>
#include <vector>

#include "acct/gpuacct/table.hpp"
#include "acct/gpuacct/core/aggregate.hpp"
#include "acct/gpuacct/core/job_detail.hpp"
#include "acct/gpuacct/core/slurmdbd_set.hpp"
#include "acct/gpuacct/core/spool_rows.hpp"

namespace acme::gpuacct {

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
    acct::SpoolSet data;
    std::vector<acct::Job> jobs;  // after the filter
    double now = 0;
    bool allocations = false;     // -X: no step rows
    std::optional<std::vector<SlurmNode>> slurm_nodes;  // nullopt: slurmctld not reachable
    // --summary and --failures alone aggregate the jobs as they stream (cli.cpp) and leave
    // `jobs` empty; unset, the views aggregate `jobs` (the HTML report holds every job anyway).
    std::optional<std::vector<acct::SummaryRow>> summary;
    std::optional<std::vector<acct::FailureRow>> failures;
    std::unordered_map<std::int64_t, AccountedExtra> accounted;
    std::map<acct::GpmKey, acct::GpmActivity> gpm;  // --detail only
    // -D from slurmdbd: `jobs` holds one entry per run (Job::restarts its run number), and the
    // GPU figures of each run come from that run's own record, by (job id, run).
    bool per_run = false;
    std::map<std::pair<std::int64_t, int>, acct::GpuUse> run_use;
    Units units;
};

enum class ViewKind { jobs, failures, nodes, summary };

// An empty table of the view: its fields and defaults, no rows.
Table view_shape(ViewKind kind);
Table build_view(ViewKind kind, const Context& context);

Table jobs_view(const Context& context);
Table failures_view(const Context& context);
Table nodes_view(const Context& context);
Table summary_view(const Context& context);

// --detail (and -j ... -l): jobstats' view of every job listed, one block each.
std::string render_details(const Context& context, const acct::DetailThresholds& thresholds);
// A job's per-node GPU means (the straggler report's input) and its stall verdicts, one per
// run; the job view and --json's acme part show them.
std::vector<record::NodeWork> node_work(const Context& context, std::int64_t job_id);
std::vector<acct::DetailStall> job_stalls(const Context& context, std::int64_t job_id);

}  // namespace acme::gpuacct
