/* The entry points each shim looks up in its C++ implementation (dlsym by these names; the
   implementations export nothing else: spank/impl.lds). Every one is noexcept on the C++ side
   and fails open: 0 unless a user's option value is refused at submission. */
#ifndef ACME_SPANK_IMPL_ABI_H
#define ACME_SPANK_IMPL_ABI_H

#ifdef __cplusplus
extern "C" {
#endif

/* Inside extern "C": spank.h declares the slurm_spank_* callbacks outside one. */
#include <slurm/spank.h>

/* gputrace_impl.so */
/* sbatch/srun/salloc: is the --gpu-telemetry value (flag or ACME_GPU_TELEMETRY) acceptable
   under these plugstack arguments? 0, or -1 after one error line (the submission is refused). */
typedef int acme_gputrace_validate_fn(int ac, char **av, const char *optarg);
/* slurmd's job epilog (job_script context; the prolog is the shim's alone). */
typedef int acme_gputrace_job_script_fn(spank_t sp, int ac, char **av);

/* faultguard_impl.so */
enum acme_faultguard_option { ACME_FG_JOB_TYPE = 0, ACME_FG_AUTO_RECOVER = 1, ACME_FG_CKPT_DIR = 2 };
/* An option callback: submit side validates (-1 refuses), slurmstepd (remote) remembers. */
typedef int acme_faultguard_option_fn(int which, const char *optarg, int remote);
/* slurmstepd: init_post_opt, task_init, task_exit of a job that gave an option. */
typedef int acme_faultguard_step_fn(spank_t sp, int ac, char **av);
/* slurmd's job prolog and epilog (job_script context). */
typedef int acme_faultguard_job_script_fn(spank_t sp, int ac, char **av);

#ifdef __cplusplus
}
#endif

#endif
