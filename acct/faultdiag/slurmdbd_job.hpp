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
    std::vector<std::string> missing_nodes; // of the newest recorded run
    std::vector<std::string> warnings;      // damaged records, one line each
};

// From the job's runs as load_accounted_runs gives them (any order). Pure.
AccountedJob accounted_job(std::span<const slurm::AccountedRun> runs, std::int64_t job_id);

// Asks slurmdbd, once accounting_is_slurmdbd said it is the storage. nullopt with `why_not`
// when slurmdbd does not answer.
std::optional<AccountedJob> read_accounted_job(std::int64_t job_id, std::string& why_not);

}  // namespace acme::faultdiag
