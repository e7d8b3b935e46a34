// Which of a job's rows in slurmdbd is one run's. A requeued job has a row per run (sacct -D),
// each with the submit time slurmctld gave that run (a requeue sets a new one). A record part
// written to "the job's newest row" lands on the wrong run, or is given up, once the next
// run's row exists (about 5 s after an admin's `scontrol requeue`): the writer names its run's
// row instead, and slurmdbd changes that row only (run_row_filter). Pure: no libslurm calls.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/slurm/jobs.hpp"

namespace acme::slurm {

// How a writer names its run. All zero: the job's newest row (the run is not known).
struct RunSelector {
    long long submit = 0;  // the run's submit time, as slurmctld gave it while the run was its own
    long long start = 0;   // the run's start time, where slurmctld's is the run's (used without a submit)
    long long before = 0;  // else: the newest run submitted before this (the job's next run's submit)
    bool unknown = false;  // the job was requeued more than once since: this run cannot be told
};

// Which run an epilog describes, from what slurmctld said of the job then and the run's restart
// count (`restart`: run_restart's, or the epilog's SLURM_JOB_RESTART_COUNT): the job's own submit and start while the run is still
// the job's (ended or completing, a requeue's included); the run before the job's current one
// once a requeue finished (slurmctld then gave the job a new submit time and no start).
RunSelector run_selector(const std::optional<JobRecord>& record, long long restart);

// The run's own restart count (its number among the job's runs, 0 for the first), from the
// epilog's SLURM_JOB_RESTART_COUNT (`restart`) and what slurmctld said of the job then. A requeue
// slurmctld made (an admin's `scontrol requeue`, a node failure, preemption) counts before the
// run's epilogs: the job is then pending (or already running again), its count and the epilog's
// are the next run's, and this run's is one less. A requeue faultguard's own epilog makes comes
// after the count was read. Without slurmctld's word: `restart` as given.
long long run_restart(const std::optional<JobRecord>& record, long long restart);

// A row as slurmdbd has it (slurmdb_job_rec_t's fields).
struct RunRow {
    long long submit = 0, start = 0, end = 0;
    std::uint32_t state = 0;  // slurmdbd's stored state (JOB_REQUEUE for a requeued run)
    bool newest = false;      // the job's newest row when read
};

enum class RunPick {
    found,       // rows[index]
    not_yet,     // no row of the run yet: slurmctld's queue to slurmdbd may still hold it
    superseded,  // no row of the run yet, and a later run has its own (slurmdbd took it first)
    unknown,     // the selector cannot tell the run (RunSelector::unknown)
};

struct RunChoice {
    RunPick pick = RunPick::not_yet;
    std::size_t index = 0;
};

// The run's row among the job's rows (any order).
RunChoice pick_run_row(const std::vector<RunRow>& rows, const RunSelector& run);

// What slurmdbd's job modify is given to change one row only: the row's state and a time window
// (sacct's -s STATE -S -E: an ended row by its end, a running one by its start), which no other
// run of the job matches (runs of one job do not overlap). `any`: no condition (the newest row).
struct RowFilter {
    bool any = false;
    std::uint32_t state = 0;
    long long usage_start = 0, usage_end = 0;
};

// nullopt when the row cannot be named alone (not started, not ended) and is not the newest.
std::optional<RowFilter> run_row_filter(const RunRow& row);

// "submitted at 1796165100" / "submitted before ..." / "the newest", for log lines.
std::string describe(const RunSelector& run);

}  // namespace acme::slurm
