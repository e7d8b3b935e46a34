// The four views of gpuacct, one file each (view_jobs.cpp, view_failures.cpp, view_nodes.cpp,
// view_summary.cpp). Fields are static so --format and --helpformat are checked before any
// spool is read: bad input never leaves partial output.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "acct/gpuacct/table.hpp"
#include "acct/gpuacct/core/context.hpp"
#include "acct/gpuacct/core/job_detail.hpp"
#include "acct/gpuacct/core/load.hpp"

namespace acme::gpuacct {

// The views show what core/load.hpp read; the names are core's.
using acct::AccountedExtra;
using acct::Context;
using acct::SlurmNode;
using acct::Units;
using acct::ViewKind;

// An empty table of the view: its fields and defaults, no rows.
Table view_shape(ViewKind kind);
Table build_view(ViewKind kind, const Context& context);

Table jobs_view(const Context& context);
// The jobs view's rows one at a time, in jobs_view's order (a job's step rows after it), so a
// listing of 100,000 jobs is printed as it is made instead of held whole. Only the cells whose
// field index is true in `wanted` are computed, the others left empty; an empty `wanted` is
// every cell.
using RowSink = std::function<void(std::vector<Cell>&& row)>;
void jobs_rows(const Context& context, const std::vector<bool>& wanted, const RowSink& sink);
// Which of the jobs' ACME1 records an -o list of the jobs view needs (acct::RecordUse): Slurm's
// own fields need none; NNodes, NodeList, AllocGPUS and GPUHours need a job's record only where
// slurmdbd's row lacks them; the rest need it always.
acct::RecordUse jobs_record_use(std::span<const acct::FieldSpec> format);
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
