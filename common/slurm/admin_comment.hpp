// libslurm's slurmdb API for one job's AdminComment in slurmdbd: where acme's job record
// lives once the job has ended (slurmctld refuses updates to a finished job; slurmdbd takes
// them from root or an operator, as `sacctmgr modify job` does).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace acme::slurm {

// Which job's row: a plain job by its id; an array task by (array job id, task id), because
// slurmdbd reads a bare id that is also an array's id as the whole array (its every task).
struct JobRow {
    unsigned job_id = 0;
    std::uint32_t array_job_id = 0;   // 0: not an array task
    std::uint32_t array_task_id = 0;
};

// The AdminComment of the job's latest run ("" when it has none), and that run's submit time
// in `submit` when given (a requeued job's next run is a new row with a later one). nullopt
// with `error` set (one line) when accounting is not configured, slurmdbd cannot be reached or
// has no such job.
std::optional<std::string> load_admin_comment(const JobRow& job, std::string& error, long long* submit = nullptr);

// Sets the AdminComment of the job's latest run. "" on success, else slurmdbd's error.
std::string store_admin_comment(const JobRow& job, const std::string& value);

}  // namespace acme::slurm
