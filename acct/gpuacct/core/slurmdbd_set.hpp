// gpuacct's SpoolSet built from Slurm's accounting instead of node spools: slurmdbd's rows for
// each job run (sacct's own fields) and the acme record every node's faultguard epilog put in
// the run's AdminComment (GPU summaries, events, diagnosis, recovery, health gate). Pure: the
// runs come from common/slurm/accounting, so the unit tests build them by hand.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include <span>
#include <string>
#include <vector>

#include "acct/gpuacct/core/spool_rows.hpp"
#include "common/slurm/accounting.hpp"

namespace acme::acct {

// One job per job id, as the spools give it: the newest run speaks for the job (state, times,
// exit codes), Restarts counts the runs before it, every run's diagnoses are kept with their
// restart number, and the GPU summaries are the newest recorded run's (a spool keeps only the
// last run's too). Events, drains and gate verdicts of every run; events and drains only in
// the options' window. Task exits are not in slurmdbd's record: none.
//
// A run whose ACME1 token is damaged or of an unknown version adds one line to `warnings`
// naming the job; the job is still listed from slurmdbd's own fields.
SpoolSet spool_set_from_accounting(std::span<const slurm::AccountedRun> runs, const ReadOptions& options,
                                   std::vector<std::string>& warnings);

// The same, built one job at a time (slurm::for_each_accounted_job's order: a job's runs
// together, oldest first), so slurmdbd's rows need not all be held: `add_job` with each job's
// runs, then `finish` once. spool_set_from_accounting is this over rows in any order.
class AccountingSetBuilder {
public:
    AccountingSetBuilder(const ReadOptions& options, size_t jobs);
    ~AccountingSetBuilder();
    AccountingSetBuilder(const AccountingSetBuilder&) = delete;
    AccountingSetBuilder& operator=(const AccountingSetBuilder&) = delete;
    // `records` false: the runs' ACME1 records are not decoded (AccountedJobs::next says what
    // the job then lacks).
    void add_job(std::span<const slurm::AccountedRun* const> runs, std::vector<std::string>& warnings, bool records = true);
    SpoolSet finish();

private:
    struct State;
    std::unique_ptr<State> state_;
};

// One job at a time, nothing kept: what --summary and --failures aggregate as slurmdbd's rows
// stream past. `next` makes the job of one job's runs (oldest first) as AccountingSetBuilder
// does, its diagnoses from every run's record in `diagnoses()`; both valid until the next call
// (the job may be changed: -T cuts its times).
// With `records` false no ACME1 record is decoded (the cost of a job's reading, when the view
// does not need it): the job has slurmdbd's fields only, Restarts counted by its rows, no node
// rows, batch host or diagnoses, and a damaged record is not noticed.
class AccountedJobs {
public:
    AccountedJobs();
    ~AccountedJobs();
    AccountedJobs(const AccountedJobs&) = delete;
    AccountedJobs& operator=(const AccountedJobs&) = delete;
    Job& next(std::span<const slurm::AccountedRun* const> runs, bool records, std::vector<std::string>& warnings);
    std::span<const Diagnosis> diagnoses() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

// sacct -D: every run of each job as a row of its own, oldest first within a job. Each run is a
// Job with Slurm's fields of that run (an earlier run's state is what slurmdbd keeps for it:
// REQUEUED, as sacct -D prints it), `restarts` its run number: its place among the job's rows in
// slurmdbd, 0 for the first (not the record's own number: a run requeued by an admin has its
// epilog run after Slurm counted the requeue, so its record names the next run's number). With
// it the nodes and GPU ids of its own record, `gpus` that record's GPU summaries and
// `diagnoses` its diagnoses (numbered as the row). A run without a record has none.
struct RunRow {
    Job job;
    std::vector<GpuSummary> gpus;
    std::vector<Diagnosis> diagnoses;
};
std::vector<RunRow> runs_from_accounting(std::span<const slurm::AccountedRun> runs);
// The rows of one job's runs, oldest first, appended to `out`.
void add_run_rows(std::span<const slurm::AccountedRun* const> runs, std::vector<RunRow>& out);

// The GPM activity (SM, tensor, DRAM bandwidth; percent) of each GPU of the newest recorded
// run of each job, from the records' per-GPU entries: what the job view (--detail) shows
// beside the summaries (a trimmed record has none). A damaged record is skipped silently:
// spool_set_from_accounting has warned about it already.
struct GpmActivity {
    std::optional<double> sm, tensor, dram;
};
using GpmKey = std::tuple<std::int64_t, std::string, int>;  // job, node, GPU id
std::map<GpmKey, GpmActivity> gpm_from_accounting(std::span<const slurm::AccountedRun> runs);
// The GPM activity of one job's newest run (`newest`), added to `out`.
void add_gpm(const slurm::AccountedRun& newest, std::map<GpmKey, GpmActivity>& out);

}  // namespace acme::acct
