// faultguard.so's insides, one file per context (as pyxis splits pyxis_slurmstepd.c,
// pyxis_slurmd.c, ...): plugin.cpp only dispatches on spank_context(). Every function here
// is called inside guarded(), so it may throw; each fails open (returns 0) on its own trouble.
#pragma once

#include <string>

#include "spank/faultguard/core/faultguard_config.hpp"
#include "spank/spank_abi.hpp"

namespace acme::faultguard::plugin {

inline constexpr const char* kPlugin = "faultguard";

// args.cpp: options in every context; plugstack arguments.
struct JobOptions {  // as the option callbacks saw them in slurmstepd
    std::string ckpt_dir;
    bool auto_recover = false;
};
const JobOptions& job_options();
// The plugstack arguments, each error logged (every caller runs where an admin reads the log).
Config load_config(int ac, char** av);
int register_options(spank_t sp);
// sbatch/srun/salloc: register the options and alias their ACME_* environment forms.
int submit_init(spank_t sp);
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
