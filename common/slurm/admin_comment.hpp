// libslurm's slurmdb API for one job's AdminComment in slurmdbd: where acme's job record
// lives once the job has ended (slurmctld refuses updates to a finished job; slurmdbd takes
// them from root or an operator, as `sacctmgr modify job` does).
#pragma once

#include <optional>
#include <string>

namespace acme::slurm {

// The AdminComment of the job's latest run ("" when it has none). nullopt with `error` set
// (one line) when accounting is not configured, slurmdbd cannot be reached or has no such job.
std::optional<std::string> load_admin_comment(unsigned job_id, std::string& error);

// Sets the AdminComment of the job's latest run. "" on success, else slurmdbd's error.
std::string store_admin_comment(unsigned job_id, const std::string& value);

}  // namespace acme::slurm
