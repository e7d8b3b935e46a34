/* The SPANK shims' text, pure and without Slurm: the plugstack arguments they read and the
   task-exit line faultguard's shim writes. Plain C that also compiles as C++, so the unit tests
   and the fuzz target hold it against the C++ parsers it must agree with. */
#ifndef ACME_SPANK_SHIM_TEXT_H
#define ACME_SPANK_SHIM_TEXT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Slurm's environment names of the options the shims alias or read (option_env.hpp spells
   them for the C++ side; the unit tests hold these to it). */
#define ACME_SUBMIT_ENV_GPU_TELEMETRY "SLURM_SPANK__SLURM_SPANK_OPTION_gputrace_gpu_telemetry"
#define ACME_SUBMIT_ENV_AUTO_RECOVER "SLURM_SPANK__SLURM_SPANK_OPTION_faultguard_auto_recover"
#define ACME_SUBMIT_ENV_CKPT_DIR "SLURM_SPANK__SLURM_SPANK_OPTION_faultguard_ckpt_dir"
#define ACME_JOB_ENV_AUTO_RECOVER "SPANK__SLURM_SPANK_OPTION_faultguard_auto_recover"
#define ACME_JOB_ENV_CKPT_DIR "SPANK__SLURM_SPANK_OPTION_faultguard_ckpt_dir"

/* plugstack.conf arguments, as the C++ parsers read them: "key=value" split at the first '=',
   the later of two equal keys winning, a refused value keeping what was before.
   acme_arg_path: the last value of `key` that is an absolute path of at most 1024 bytes without
   a newline (what both plugins accept as a directory), else `fallback`.
   acme_arg_bool: the last value of `key` that acme_parse_bool reads, else `fallback`.
   acme_arg_on_off: the last value of `key` that is exactly "on" or "off", else `fallback`. */
const char *acme_arg_path(int ac, char **av, const char *key, const char *fallback);
int acme_arg_bool(int ac, char **av, const char *key, int fallback);
int acme_arg_on_off(int ac, char **av, const char *key, int fallback);
/* acme_arg_seconds: the last value of `key` that parse_double reads (decimal, no sign, space or
   hex) and that lies in [lo, hi], else `fallback`. */
double acme_arg_seconds(int ac, char **av, const char *key, double lo, double hi, double fallback);
/* common/util/parse.hpp's parse_bool: 1, 0, or -1 when `text` is neither. */
int acme_parse_bool(const char *text);

/* task_exit_log.hpp's line, "STEP TASK STATUS TS\n" (TS in seconds, 3 decimals), into `out`;
   its length, or -1 when it does not fit. */
int acme_format_task_exit(char *out, size_t size, uint32_t step_id, uint32_t task_id, int wait_status, double ts);

#ifdef __cplusplus
}
#endif

#endif
