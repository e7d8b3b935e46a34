// libslurm's slurmdb API for one job's AdminComment in slurmdbd: where acme's job record
// lives once the job has ended (slurmctld refuses updates to a finished job; slurmdbd takes
// them from root or an operator, as `sacctmgr modify job` does).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/slurm/run_row.hpp"
#include "common/slurm/slurmdbd.hpp"

namespace acme::slurm {

// Which job's row: a plain job by its id; an array task by (array job id, task id), because
// slurmdbd reads a bare id that is also an array's id as the whole array (its every task).
struct JobRow {
    unsigned job_id = 0;
    std::uint32_t array_job_id = 0;   // 0: not an array task
    std::uint32_t array_task_id = 0;
};

// Why a session could not open or read: a publisher keeps its part for a later try when
// slurmdbd or the run's row may be there then (unreachable, no_job; superseded: a later run's
// row came first, which slurmdbd does when slurmctld's queue to it was held up), and gives up
// otherwise (unknown_run: the epilog could not tell its run).
struct AdminCommentError {
    enum class Kind { none, not_slurmdbd, unreachable, no_job, superseded, unknown_run, failed };
    Kind kind = Kind::none;
    std::string text;  // one line
};

// One writer's session with slurmdbd for job records: slurmctld's accounting settings are read
// once and one connection serves every read and write, so a read-merge-write costs two round
// trips to slurmdbd and none to slurmctld. With a few hundred nodes publishing parts of one
// record, that keeps the window short in which another node's write can come between.
class AdminCommentSession {
public:
    // nullopt with `error` set when accounting is not slurmdbd (not_slurmdbd), slurmctld or
    // slurmdbd does not answer (slurmdbd within 1 s: unreachable) or refuses us (failed).
    static std::optional<AdminCommentSession> open(AdminCommentError& error);

    // The AdminComment of the run's row ("" when it has none), that row in `found` when given.
    // nullopt with `error` set when slurmdbd has no row of the run yet (no_job; superseded when it
    // has a later run's), the run cannot be told (unknown_run), or slurmdbd fails (failed).
    std::optional<std::string> load(const JobRow& job, const RunSelector& run, AdminCommentError& error,
                                    RunRow* found = nullptr);

    // Sets the AdminComment of the row `load` found and commits: kind none on success, no_job when
    // slurmdbd has no such row (any more), failed when it refused the change or the commit (worth
    // another try). Only that row changes, however many runs the job had since (run_row.hpp).
    AdminCommentError store(const JobRow& job, const RunRow& row, const std::string& value);

    AdminCommentSession(AdminCommentSession&&) noexcept;
    AdminCommentSession& operator=(AdminCommentSession&&) noexcept;
    ~AdminCommentSession();

private:
    AdminCommentSession(std::string cluster, SlurmdbdConnection conn);
    std::string cluster_;
    SlurmdbdConnection conn_;
};

}  // namespace acme::slurm
