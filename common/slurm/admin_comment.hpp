// libslurm's slurmdb API for one job's AdminComment in slurmdbd: where acme's job record
// lives once the job has ended (slurmctld refuses updates to a finished job; slurmdbd takes
// them from root or an operator, as `sacctmgr modify job` does).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/slurm/slurmdbd.hpp"

namespace acme::slurm {

// Which job's row: a plain job by its id; an array task by (array job id, task id), because
// slurmdbd reads a bare id that is also an array's id as the whole array (its every task).
struct JobRow {
    unsigned job_id = 0;
    std::uint32_t array_job_id = 0;   // 0: not an array task
    std::uint32_t array_task_id = 0;
};

// One writer's session with slurmdbd for job records: slurmctld's accounting settings are read
// once and one connection serves every read and write, so a read-merge-write costs two round
// trips to slurmdbd and none to slurmctld. With a few hundred nodes publishing parts of one
// record, that keeps the window short in which another node's write can come between.
class AdminCommentSession {
public:
    // nullopt with `error` set (one line) when accounting is not slurmdbd ("not slurmdbd" in
    // it), slurmdbd does not answer within 1 s ("does not answer" in it) or refuses us.
    static std::optional<AdminCommentSession> open(std::string& error);

    // The AdminComment of the job's latest run ("" when it has none), and that run's submit
    // time in `submit` when given (a requeued job's next run is a new row with a later one).
    // nullopt with `error` set when slurmdbd has no such job ("has no job" in it) or fails.
    std::optional<std::string> load(const JobRow& job, std::string& error, long long* submit = nullptr);

    // Sets the AdminComment of the job's latest run and commits. "" on success, else the error.
    std::string store(const JobRow& job, const std::string& value);

    AdminCommentSession(AdminCommentSession&&) noexcept;
    AdminCommentSession& operator=(AdminCommentSession&&) noexcept;
    ~AdminCommentSession();

private:
    AdminCommentSession(std::string cluster, SlurmdbdConnection conn);
    std::string cluster_;
    SlurmdbdConnection conn_;
};

}  // namespace acme::slurm
