// faultguard_impl.so's insides, one file per context (as pyxis splits pyxis_slurmstepd.c,
// pyxis_slurmd.c, ...): plugin.cpp only exports the entry points the shim (shim.c) calls. Every function here
// is called inside guarded(), so it may throw; each fails open (returns 0) on its own trouble.
#pragma once

#include <string>

#include "spank/faultguard/core/faultguard_config.hpp"
#include "spank/spank_abi.hpp"

namespace acme::faultguard::plugin {

inline constexpr const char* kPlugin = "faultguard";

// args.cpp: the options' values (the shim registers the options); plugstack arguments.
struct JobOptions {  // as the option callbacks saw them in slurmstepd
    std::string ckpt_dir;
    bool auto_recover = false;
};
const JobOptions& job_options();
// The plugstack arguments, each error logged (every caller runs where an admin reads the log).
Config load_config(int ac, char** av);
// An option callback the shim forwards (impl_abi.h's acme_faultguard_option: which one):
// sbatch/srun/salloc validate the value (-1 refuses the submission), slurmstepd remembers it.
int on_option(int which, const char* optarg, int remote);
// job_script context: the job's --auto-recover cap (-1: not asked), its --llm-job-type.
int auto_recover_option(spank_t sp);
std::string job_type_option(spank_t sp);

// slurmstepd.cpp: remote context.
int slurmstepd_init_post_opt(spank_t sp, int ac, char** av);
int slurmstepd_task_init(spank_t sp);
int slurmstepd_task_exit(spank_t sp, int ac, char** av);

// job_script.cpp: slurmd's prolog and epilog.
int job_script_prolog(spank_t sp, int ac, char** av);
int job_script_epilog(spank_t sp, int ac, char** av);

}  // namespace acme::faultguard::plugin
