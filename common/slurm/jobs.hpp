// libslurm wrapper: what acme-slurm asks slurmctld about jobs. Never parses command output.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace acme::slurm {

// True while the job is running (or suspended) somewhere, false once it finished, was
// requeued (pending again) or is unknown to slurmctld; nullopt when slurmctld cannot be asked.
std::optional<bool> job_is_active(unsigned job_id);

// What slurmctld knows of a job, as far as acme-slurm needs it.
struct JobRecord {
    std::uint32_t job_id = 0;
    std::uint32_t array_job_id = 0, array_task_id = 0;
    std::string name, user, account, partition, comment;
    std::string qos;                // empty where slurmctld did not say
    std::string std_out, std_err;   // expanded by libslurm (slurm_get_job_stdout/stderr)
    std::string work_dir, batch_host, nodes;
    std::string mail_user;          // --mail-user; empty: the job's user
    std::string exc_nodes;          // ExcNodeList (--exclude)
    std::uint32_t state = 0;        // job_state & JOB_STATE_BASE
    bool timeout = false, cancelled = false, node_fail = false, oom = false, preempted = false;
    bool completing = false;        // epilogs (or a requeue) still in progress
    double begin_time = 0;          // when it may start (a requeue pushes it out)
    std::uint32_t restart_count = 0;
    std::uint32_t exit_code = 0;    // raw wait status
    std::uint32_t derived_ec = 0;   // highest step exit, raw wait status
    std::uint32_t num_nodes = 0;
    std::uint32_t gpus_total = 0;   // gres/gpu in the job's allocated TRES
    double submit_time = 0, start_time = 0, end_time = 0;
    std::string state_name;         // "COMPLETED", "FAILED", ... (job_state_string)
};

// nullopt when slurmctld cannot be asked or does not know the job.
std::optional<JobRecord> load_job(unsigned job_id);

// "n[1-3],gpu07" -> {"n1", "n2", "n3", "gpu07"}, through Slurm's own hostlist parser.
std::vector<std::string> expand_hostlist(const std::string& hostlist);

}  // namespace acme::slurm
