// libslurm wrapper for evalschedd: the cluster view its planner needs (free GPUs per node, the
// backfill plan of pending jobs), batch submission on a user's behalf, cancellation, and the
// job list it reconciles against after a restart. Never parses command output.
#pragma once

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

namespace acme::slurm {

// One slurmctld error, as one line ("slurm_submit_batch_job: Requested node configuration is
// not available").
struct SlurmError {
    std::string message;
};

struct NodeGpus {
    std::string name;
    int total_gpus = 0;
    int used_gpus = 0;
    // False when drained, draining, down, failing, in maintenance, reserved, not responding or
    // future: the planner must not place work there.
    bool usable = true;
    std::uint32_t raw_state = 0;
};

// Count of GPUs in a gres string as slurmctld prints it: "gpu:4", "gpu:a100:4(S:0-1)",
// "gpu:2(IDX:0-1),nic:1". 0 when there is no gpu entry.
int gres_gpu_count(const std::string& gres);

// slurm_load_node(SHOW_DETAIL): every node with gres and gres_used. nullopt: slurmctld
// cannot be asked (error names why).
std::optional<std::vector<NodeGpus>> load_node_gpus(std::string& error);
// SchedulerParameters' bf_interval in seconds (slurm_load_ctl_conf; Slurm's default 30 when
// unset): how long a job that only backfill may start can wait for it. nullopt: slurmctld
// cannot be asked (error names why).
std::optional<double> backfill_interval_s(std::string& error);
// The GPUs of the nodes work may be placed on (usable ones).
int usable_gpus(const std::vector<NodeGpus>& nodes);

struct JobView {
    std::uint32_t job_id = 0;
    std::string name, comment, nodes, sched_nodes;
    std::uint32_t user_id = 0;
    std::uint32_t state = 0;         // job_state & JOB_STATE_BASE
    std::uint32_t exit_code = 0;     // raw wait status
    std::time_t start_time = 0;      // actual, or the backfill plan's expected start when pending
    std::time_t end_time = 0;
    std::uint32_t time_limit_min = 0;  // the granted limit (backfill may have cut it toward --time-min)
    bool timeout = false, cancelled = false, node_fail = false, oom = false;  // how it ended
    // Pending on a dependency that can no longer be met (state reason DependencyNeverSatisfied):
    // Slurm 22.05 leaves such a job pending forever unless kill_invalid_depend is set.
    bool dependency_never = false;
    // Cancelled by slurmctld for that same reason, before it ran: what a site that sets
    // SchedulerParameters=kill_invalid_depend gets instead of the job pending forever.
    bool dependency_killed = false;
    // Ended, but its epilog still runs: slurmctld frees its GPUs only when that is over.
    bool completing = false;
    bool pending() const;
    bool active() const;             // pending, running, suspended or completing
    bool succeeded() const;          // COMPLETED with exit status 0
};

// How a finished job step looks to code that judges jobs: COMPLETED with its exit status when
// `wait_status` (as waitpid returns it, of srun) is a clean exit 0, FAILED otherwise.
JobView step_view(std::uint32_t job_id, int wait_status, const std::string& nodes);

// slurm_load_jobs(SHOW_ALL): every job slurmctld still remembers (MinJobAge after it ended).
std::optional<std::vector<JobView>> load_jobs(std::string& error);
// The same, only when slurmctld's job data changed since `since` (its last_update, updated
// here; 0 the first time): what `squeue -i` does. Unchanged, slurmctld answers
// SLURM_NO_CHANGE_IN_DATA without sending a job, so asking several times a second is cheap.
// nullopt: slurmctld cannot be asked; an empty `changed` vector with changed=false: no change.
struct JobsChange {
    bool changed = false;
    std::vector<JobView> jobs;
};
std::optional<JobsChange> load_jobs_since(std::time_t& since, std::string& error);

struct BatchJob {
    std::string name, comment;
    std::string script;                    // "#!/bin/bash\n..."
    std::vector<std::string> environment;  // "KEY=value"
    std::uint32_t user_id = 0, group_id = 0;
    std::uint32_t time_limit_min = 0;      // 0: the partition's default
    std::uint32_t time_min_min = 0;        // --time-min; 0: none (the limit is fixed)
    int gpus_per_node = 0;                 // 0: CPU-only
    std::string required_node, excluded_nodes, partition, dependency;
    std::string work_dir, std_out;
};

// slurm_submit_batch_job. Returns the job id, or sets error.
std::optional<std::uint32_t> submit_batch(const BatchJob& job, std::string& error);

// slurm_kill_job(SIGKILL): true when it is gone or was never known.
bool cancel_job(std::uint32_t job_id, std::string& error);

// slurm_get_job_steps: whether step `step_id` of job `job_id` still runs. nullopt when
// slurmctld cannot be asked (error names why).
std::optional<bool> step_running(std::uint32_t job_id, std::uint32_t step_id, std::string& error);

// slurm_kill_job(signal, KILL_JOB_BATCH): the signal to the batch script only (scancel --batch),
// so a job whose script traps it ends COMPLETED, not CANCELLED; its steps end with it. True
// when it was sent or the job is already gone.
bool signal_batch(std::uint32_t job_id, int signal, std::string& error);

}  // namespace acme::slurm
