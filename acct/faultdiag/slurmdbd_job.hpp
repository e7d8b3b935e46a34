// What Slurm's accounting knows about one job for faultdiag: the diagnosis faultguard put in
// each run's acme record (AdminComment in slurmdbd). slurmdbd's PrivateData decides whether
// the caller sees the job at all: another user's job is simply not there, so nothing of its
// evidence can be printed.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "acct/faultdiag/spool_job.hpp"
#include "common/slurm/accounting.hpp"

namespace acme::faultdiag {

struct AccountedJob {
    bool found = false;                    // slurmdbd returned a run of the job to this caller
    std::optional<StoredDiagnosis> stored;  // the newest run's most decisive diagnosis
    std::string exit_code;                  // the newest run's EXIT:SIGNAL
    std::string state;                      // the newest run's state word (FAILED, COMPLETED ...)
    double end = 0;                         // the newest run's end (0: slurmdbd has none yet)
    std::vector<std::string> missing_nodes; // of the newest recorded run
    std::vector<std::string> warnings;      // damaged records, one line each
};

// From the job's runs as load_accounted_runs gives them (any order). Pure.
AccountedJob accounted_job(std::span<const slurm::AccountedRun> runs, std::int64_t job_id);

// faultguard publishes a run's record after the epilog, detached, in a few seconds (its
// read-back loop has 8): a job that did not complete and ended less than this long ago may
// still get its diagnosis.
inline constexpr double kRecordArrivalSeconds = 20;

// Whether the record may still be on its way at `now` (a job that did not complete, ended
// within kRecordArrivalSeconds, and has no diagnosis yet). Pure.
bool record_may_be_on_its_way(const AccountedJob& job, double now);

// Asks slurmdbd, once accounting_is_slurmdbd said it is the storage. nullopt with `why_not`
// when slurmdbd does not answer.
std::optional<AccountedJob> read_accounted_job(std::int64_t job_id, std::string& why_not);

}  // namespace acme::faultdiag
