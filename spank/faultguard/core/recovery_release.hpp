// After a requeue: Slurm holds the job for AuthInfo's cred_expire (120 s by default) before it
// may start again. A researcher's job that lost a GPU should not idle two minutes for nothing,
// so a small detached watcher waits for the requeue to land and makes the job eligible at once.
#pragma once

#include <string>

namespace acme::recovery {

// Blocks until the job is pending again with a restart count above `restart` (at most 3
// minutes), then sets its StartTime to now and, when `exclude_node` is given, adds that node to
// the job's excluded nodes: a node a stall verdict named on evidence the job itself could have
// made (its GPUs spinning while the others idle) is kept from this job, not drained for everyone.
// 0 on success.
int release_after_requeue(unsigned job_id, long long restart, const std::string& exclude_node = {});

// Starts `self --release JOB --restart N [--exclude-node NODE]` detached (self: this program,
// which must accept those flags and call release_after_requeue). Empty on success, else why not.
std::string start_release_watcher(unsigned job_id, long long restart, const std::string& log_path, const std::string& exclude_node = {});

}  // namespace acme::recovery
