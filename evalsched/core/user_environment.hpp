// The environment a user submits an evaluation from, carried to its trials as sbatch's default
// --export=ALL would carry it: captured by `evalsched submit`, checked again by evalschedd
// (which never trusts a client), stored with the evaluation in the daemon's root-only store (it
// may hold tokens), and given to every trial and metric job of the evaluation. Bounded, so one
// submission cannot bloat the store or slurmctld's job records.
//
// The daemon runs as root. It gives this environment only to processes that have already become
// the user (a forked child that dropped to the user execs srun: pilot_steps.hpp), and to
// slurmctld as a job's environment. The variables that steer the dynamic loader and glibc at a
// program's start are refused as well, so a later slip that ran a root program with the user's
// environment would still not run the user's code as root.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace acme::evalsched {

inline constexpr std::size_t kMaxEnvironmentBytes = 128 * 1024;  // all "NAME=value" strings together
inline constexpr std::size_t kMaxEnvironmentVars = 1024;

// Whether a variable travels: not Slurm's own (SLURM_*, SBATCH_*, SALLOC_*, SRUN_*: those of the
// submitting shell would mislead the job), not evalsched's (EVALSCHED_*, set by the daemon), not
// the shell's bookkeeping (PWD, OLDPWD, SHLVL, _), and not a loader variable (below).
bool carried_variable(std::string_view name);

// The variables with which a user chooses code or files a program loads before main(): every
// LD_* of the dynamic loader but LD_LIBRARY_PATH (LD_PRELOAD, LD_AUDIT, LD_DEBUG_OUTPUT,
// LD_PROFILE, ...), glibc's GLIBC_TUNABLES, and the rest of glibc's list of variables it
// ignores in setuid programs (elf/dl-support, sysdeps/generic/unsecvars.h: GCONV_PATH,
// GETCONF_DIR, HOSTALIASES, LOCALDOMAIN, LOCPATH, MALLOC_TRACE, NIS_PATH, NLSPATH,
// RESOLV_HOST_CONF, RES_OPTIONS, TZDIR). LD_LIBRARY_PATH and TMPDIR, also on glibc's list,
// travel: module systems and sites set them for jobs, and no root process is given them.
// A harness that needs one of these sets it in the suite (env = {...} or setup = "export ..."),
// which runs inside the job as the user.
bool loader_variable(std::string_view name);

// The carried "NAME=value" entries of envp (environ), in order. Entries without '=' are dropped.
// `withheld`, when given, receives the names of loader variables left out (the CLI says so).
std::vector<std::string> capture_environment(char* const* envp, std::vector<std::string>* withheld = nullptr);

// What the CLI says about the loader variables capture_environment left out: their names, and
// how to give one to the harness.
std::string withheld_note(const std::vector<std::string>& names);

// An empty string when `env` may be carried, else one line saying what is wrong and what to do
// (too large, too many, a malformed entry, a loader variable).
std::string environment_problem(const std::vector<std::string>& env);

// `env` without its loader variables: what a stored environment (saved before they were
// refused, e.g. by a follow) is given to jobs as. `dropped` receives the names left out.
std::vector<std::string> without_loader_variables(const std::vector<std::string>& env, std::vector<std::string>* dropped = nullptr);

// `base` (the user's environment) with every NAME of `fixed` replacing the user's value, and
// the fixed entries appended: what a job's environment is.
std::vector<std::string> merge_environment(const std::vector<std::string>& base, const std::vector<std::string>& fixed);

}  // namespace acme::evalsched
