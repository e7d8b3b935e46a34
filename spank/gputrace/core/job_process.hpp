// Whether a process NVML lists on a GPU belongs to the job holding it (held-but-idle GPUs,
// idle.hpp): its cgroup path names the job (Slurm's cgroup plugins put every task under
// .../job_<id>/...), or, where Slurm tracks no cgroups, its environment says SLURM_JOB_ID=<id>.
// Read from `proc_root` (/proc; a directory in the unit tests) by the sampler, as root.
#pragma once

#include <string>

namespace acme::telemetry {

bool process_of_job(const std::string& proc_root, unsigned pid, long long job_id);

}  // namespace acme::telemetry
