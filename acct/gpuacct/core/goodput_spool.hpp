// gpuacct goodput from node spools (issue 39). A spool holds of a job its newest run (the jobs
// row: submit, start, end, state, GPUs, restarts, user, account, partition), every run's
// diagnosis and stall verdict (both keyed by job and restart) and the newest run's per-GPU
// summaries. It does not hold an earlier run of a requeue chain: neither its start and end nor
// the checkpoint its successor resumed from. So a job that ran once is split exactly as from
// slurmdbd; a requeued job gives its newest run's pieces, its earlier runs are counted (runs,
// failures from their diagnoses) and named "not held" (Goodput::runs_not_held), never 0 hours.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "acct/gpuacct/core/aggregate.hpp"
#include "acct/gpuacct/core/goodput.hpp"
#include "acct/gpuacct/core/spool_rows.hpp"

namespace acme::acct {

// One job's goodput from what the spools hold: `diagnoses` and `stalls` are the job's rows of
// every run and node (withdrawn verdicts are skipped), `idle_gpus` its GPUs whose summary says
// idle (nullopt: no telemetry). `now` ends a run still running; notes as compute_goodput's.
Goodput spool_goodput(const Job& job, std::span<const Diagnosis> diagnoses, std::span<const Stall> stalls,
                      std::optional<int> idle_gpus, double now, bool notes = true);

// The sum over the jobs and diagnoses of spools already read (read_spools with diagnoses: the
// HTML report), their stall verdicts and idle GPUs read again from `dir` as the stream reads them.
ClusterGoodput spool_cluster_goodput(const std::string& dir, const SpoolSet& data, const JobFilter& filter, double now);

// gpuacct --spool-dir DIR goodput: the jobs streamed (scan_spools, one part per core), each
// summed as it passes, none kept. `read` names the period; problems: files that were passed over.
ClusterGoodput stream_spool_goodput(const std::string& dir, ReadOptions read, const JobFilter& filter, double now,
                                    SpoolScan& scan);

}  // namespace acme::acct
