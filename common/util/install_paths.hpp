// Where an installed acme-slurm keeps things: one header, so the plugins, their helpers, the
// CLIs and the daemon agree for any --prefix/--sysconfdir/--localstatedir. The directories
// come from configure through the Makefile (ACME_*_DIR, see ACME_PATH_DEFS in Makefile.am);
// there is deliberately no fallback, because a default compiled in here that differs from
// the one `make install` writes into plugstack.conf.d/acme.conf is exactly the bug this
// header exists to prevent (a plugin writing one spool and gpuacct reading another).
#pragma once

#include <string_view>

#if !defined(ACME_SPOOL_DIR) || !defined(ACME_STATE_DIR) || !defined(ACME_CONF_DIR) || \
    !defined(ACME_SLURM_CONF_DIR) || !defined(ACME_HELPER_DIR) || !defined(ACME_HEARTBEAT_DIR)
#error "ACME_*_DIR are not defined: build through the Makefile (ACME_PATH_DEFS), not by hand"
#endif

namespace acme::paths {

// Node spools: <spool>/<node>.db, root-only, on the node's local disk.
inline constexpr std::string_view kSpoolDir = ACME_SPOOL_DIR;
// State that outlives a job: the diagnosis labels, evalschedd's database and results.
inline constexpr std::string_view kStateDir = ACME_STATE_DIR;
inline constexpr std::string_view kLabelsDb = ACME_STATE_DIR "/labels.db";
inline constexpr std::string_view kEvalschedDb = ACME_STATE_DIR "/evalsched.db";
inline constexpr std::string_view kEvalschedResults = ACME_STATE_DIR "/evalsched/results";
// Configuration, beside Slurm's own (slurm.conf's directory), so one config management rule
// ships both.
inline constexpr std::string_view kSlurmConf = ACME_SLURM_CONF_DIR "/slurm.conf";
inline constexpr std::string_view kConfDir = ACME_CONF_DIR;
inline constexpr std::string_view kRulesDir = ACME_CONF_DIR "/rules.d";
inline constexpr std::string_view kCheckpointRules = ACME_CONF_DIR "/checkpoints.toml";
inline constexpr std::string_view kGpucheckConfig = ACME_CONF_DIR "/gpucheck.toml";
inline constexpr std::string_view kEvalschedConf = ACME_CONF_DIR "/evalsched.conf";
// The node-side helpers the plugins start (sampler, epilog, health gate, checkpoint finder).
inline constexpr std::string_view kHelperDir = ACME_HELPER_DIR;
// The base of the per-job directories ACME_HEARTBEAT_FILE lives in (gputrace heartbeat_dir=).
inline constexpr std::string_view kHeartbeatDir = ACME_HEARTBEAT_DIR;
// evalschedd's socket: systemd's RuntimeDirectory=evalschedd, so /run whatever the prefix.
inline constexpr std::string_view kEvalschedSocket = "/run/evalschedd/evalschedd.sock";

}  // namespace acme::paths
