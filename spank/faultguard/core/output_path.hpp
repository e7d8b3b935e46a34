// Where a batch job's stdout/stderr went: Slurm's --output/--error filename patterns
// (sbatch(1) "filename pattern") expanded for one job. The epilog gets the raw pattern in
// SLURM_JOB_STDOUT, unset for the default slurm-%j.out (slurm-%A_%a.out for arrays).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace acme::faultguard {

struct JobNames {
    std::uint32_t job_id = 0;
    std::uint32_t array_job_id = 0;   // 0: not an array
    std::uint32_t array_task_id = 0;
    std::string name;                 // %x
    std::string user;                 // %u
    std::string first_node;           // %N for a batch job: the batch host
    std::string work_dir;             // relative patterns are under it
};

// Expands %%, %A, %a, %j, %J, %N, %n, %s, %t, %u, %x (with optional zero-padding width, as
// in %4j). An empty pattern means Slurm's default file.
std::string expand_output_pattern(std::string_view pattern, const JobNames& job);

}  // namespace acme::faultguard
