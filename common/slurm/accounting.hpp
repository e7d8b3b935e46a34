// libslurm's slurmdb API: Slurm's own job accounting (slurmdbd), where a cluster runs it, so
// gpuacct can check its node-spool job records against it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace acme::slurm {

struct AccountedJob {
    std::uint32_t job_id = 0;
    std::string state;      // COMPLETED, FAILED ... (base state word)
    double start = 0, end = 0;
    std::string exit_code;  // "EXIT:SIGNAL"
};

// Jobs slurmdbd holds for the window (or the ids, when given). nullopt with `why_not` set when
// accounting is not there: AccountingStorageType is accounting_storage/none, slurmctld cannot
// be asked, or slurmdbd does not answer.
std::optional<std::vector<AccountedJob>> load_accounted_jobs(const std::vector<std::int64_t>& job_ids, double start,
                                                             double end, std::string& why_not);

}  // namespace acme::slurm
