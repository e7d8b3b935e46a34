// The environment a user submits an evaluation from, carried to its trials as sbatch's default
// --export=ALL would carry it: captured by `evalsched submit`, checked again by evalschedd
// (which never trusts a client), stored with the evaluation in the daemon's root-only store (it
// may hold tokens), and given to every trial and metric job of the evaluation. Bounded, so one
// submission cannot bloat the store or slurmctld's job records.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace acme::evalsched {

inline constexpr std::size_t kMaxEnvironmentBytes = 128 * 1024;  // all "NAME=value" strings together
inline constexpr std::size_t kMaxEnvironmentVars = 1024;

// Whether a variable travels: not Slurm's own (SLURM_*, SBATCH_*, SALLOC_*, SRUN_*: those of the
// submitting shell would mislead the job), not evalsched's (EVALSCHED_*, set by the daemon), and
// not the shell's bookkeeping (PWD, OLDPWD, SHLVL, _).
bool carried_variable(std::string_view name);

// The carried "NAME=value" entries of envp (environ), in order. Entries without '=' are dropped.
std::vector<std::string> capture_environment(char* const* envp);

// An empty string when `env` may be carried, else one line saying what is wrong and what to do
// (too large, too many, a malformed entry).
std::string environment_problem(const std::vector<std::string>& env);

// `base` (the user's environment) with every NAME of `fixed` replacing the user's value, and
// the fixed entries appended: what a job's environment is.
std::vector<std::string> merge_environment(const std::vector<std::string>& base, const std::vector<std::string>& fixed);

}  // namespace acme::evalsched
