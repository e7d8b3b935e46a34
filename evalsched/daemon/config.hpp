// evalschedd's configuration file (SLURM_CONF_DIR/acme/evalsched.conf, man evalsched.conf(5)):
// key=value lines like slurm.conf. Strict: an unknown key or a bad value refuses to start with
// file:line, because a daemon that silently ignores "admin_grup=" hands no one admin rights
// and says nothing.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "common/util/install_paths.hpp"

namespace acme::evalsched {

inline constexpr std::string_view kDefaultConfigPath = paths::kEvalschedConf;
inline constexpr std::string_view kDefaultSocket = paths::kEvalschedSocket;

struct DaemonConfig {
    std::string socket{kDefaultSocket};                  // the API, HTTP/JSON, SO_PEERCRED
    std::string database{paths::kEvalschedDb};
    std::string results_dir{paths::kEvalschedResults}; // per evaluation, owned by its user
    std::string admin_group;                             // members see and cancel every evaluation
    std::string stage_dir = "/dev/shm";                  // node-local, world-writable and sticky
    double stage_cache_bytes = 64e9;                     // LRU-evicted above this, per node and user
    std::string stage_helper;                            // evalsched-stage; default: installed one
    std::string rules_dir{paths::kRulesDir};   // faultdiag's rules, for retry decisions
    std::string partition;                               // empty: the cluster's default
    std::string metrics_listen;                          // "127.0.0.1:9817": /metrics only
    std::string log_file;                                // empty: stderr
    double poll_interval_s = 5;
    // Between rounds, how often the scheduler asks slurmctld whether its jobs changed (cheap:
    // no data when nothing did); a change runs a round at once, so a GPU freed by a trial's end
    // gets the next trial within about this long. 0: the timer alone (poll_interval).
    double change_poll_interval_s = 0.25;
    double bf_window_s = 3600;                           // caps a node's "free until" horizon
    int max_attempts = 3;
    double margin_fraction = 0.2;
    double margin_s = 120;
    // What one client may cost the daemon (issue 16): evhttp's limits, a per-uid connection
    // cap, and the size of one evaluation (its trials are built and stored in one go).
    double request_timeout_s = 30;                       // whole request, and idle keep-alive
    double max_header_bytes = 64 * 1024;
    double max_body_bytes = 2 << 20;
    int max_connections_per_user = 64;
    int max_datasets = 2000;                             // per evaluation
    int max_trials = 10000;                              // per evaluation
    int max_evaluations_per_user = 100;                  // active at once (admins too: a script's loop is anyone's)
    // evalsched follow (issue 21): recovery's rules say which checkpoints are complete; the
    // helper lists them as the follow's user, every follow_interval, within the scan timeout.
    std::string checkpoint_rules{paths::kCheckpointRules};
    std::string follow_helper;                           // evalsched-ckpt-scan; default: installed one
    double follow_interval_s = 60;
    double follow_scan_timeout_s = 30;
    // mode = pilots (issue 18): per-node pilot allocations whose job steps run the trials;
    // mode = trials (the default): one batch job per trial.
    bool pilots = false;
    double pilot_max_s = 2 * 3600;                       // a pilot's --time at most
    // Slurm counts a job's limit from its allocation: the prolog, the health gate and the batch
    // script's start come out of it before a step runs (3.2 s measured on the minicluster,
    // 10-20 s on real clusters, issue 18). A pilot's --time-min and --time carry it.
    double launch_cost_s = 15;
    // Pilots that serve (issue 18): the ports a pilot's server may listen on, on its node; each
    // running pilot on a node gets its own. Tail re-sharding: no piece shorter than this.
    int serve_port_min = 20000, serve_port_max = 20999;
    double tail_min_piece_s = 60;
};

class ConfigError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Throws ConfigError: "<file>:<line>: <problem>: <what to do>".
DaemonConfig parse_config(std::string_view text, const std::string& file);
DaemonConfig load_config(const std::string& path);

}  // namespace acme::evalsched
