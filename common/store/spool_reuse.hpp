// A job id that Slurm hands out again must not mix with the older job's rows in the node spool.
// Ids come back when slurmctld loses its state (StateSaveLocation wiped, a new controller) or
// MaxJobId wraps; the spool outlives both. Slurm 26.05 gives every job a SLUID that is never
// handed out again and survives requeues (SLURM_JOB_SLUID in the prolog's and epilog's
// environment): the jobs row keeps it, and the first writer of a job whose id's row holds
// another SLUID moves the older job's rows aside first. Before 26.05 there is no SLUID, the
// sluid passed is empty, and nothing moves (a requeued job keeps its id and its rows there too).
#pragma once

#include <string>

#include "common/store/database.hpp"

namespace acme::store {

// The retired spool of a spool: <dir>/retired/<node>.db, a spool itself (gpuacct
// --spool-dir <dir>/retired reads it). Readers of <dir> never look in it.
std::string retired_spool_path(const std::string& spool_path);

// When the spool's row for job_id holds a SLUID other than `sluid`, moves the older job's rows
// of every table keyed by job id to the retired spool, in one transaction: all of them where a
// table has no time column, those from before `job_start` (Unix seconds) where it has, so a
// row the new job wrote already stays. A job id rows are moved for a second time replaces
// the older copy there. Returns how many rows moved (0: nothing to do, sluid is empty, or
// job_start is not known, <= 0).
// Throws (store::Error from SQLite, runtime_error when retired/ cannot be made); nothing has
// moved then.
int retire_reused_job_id(Database& db, long long job_id, const std::string& sluid, double job_start);

}  // namespace acme::store
