// libslurm wrapper: what acme-slurm asks slurmctld about jobs. Never parses command output.
#pragma once

#include <optional>

namespace acme::slurm {

// True while the job is running (or suspended) somewhere, false once it finished, was
// requeued (pending again) or is unknown to slurmctld; nullopt when slurmctld cannot be asked.
std::optional<bool> job_is_active(unsigned job_id);

}  // namespace acme::slurm
