// The four views of gpuacct, one file each (view_jobs.cpp, view_failures.cpp, view_nodes.cpp,
// view_summary.cpp). Fields are static so --format and --helpformat are checked before any
// spool is read: bad input never leaves partial output.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "acct/gpuacct/table.hpp"
#include "acct/gpuacct/core/aggregate.hpp"
#include "acct/gpuacct/core/spool_rows.hpp"

namespace acme::gpuacct {

struct SlurmNode {
    std::string name, state, reason;
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
};

enum class ViewKind { jobs, failures, nodes, summary };

// An empty table of the view: its fields and defaults, no rows.
Table view_shape(ViewKind kind);
Table build_view(ViewKind kind, const Context& context);

Table jobs_view(const Context& context);
Table failures_view(const Context& context);
Table nodes_view(const Context& context);
Table summary_view(const Context& context);

}  // namespace acme::gpuacct
