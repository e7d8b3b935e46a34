// faultguard's plugstack.conf arguments. Pure, unit-tested and fuzzed; errors are one line that
// names the key, and a bad key leaves the plugin harmless with its defaults.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/util/install_paths.hpp"

namespace acme::faultguard {

struct Config {
    std::string spool{paths::kSpoolDir};
    std::string rules;          // rules.d directory of the diagnosis engine
    std::string labels;         // labels store (faultdiag --label) for history matching; empty: none
    std::string helper;         // path of acme-faultguard-epilog
    double timeout = 20.0;      // seconds the epilog waits for the helper
    long long log_bytes = 256 * 1024;  // how much of the end of stdout/stderr is read
    int drain_per_user = 3;            // nodes one uid's jobs may hold drained at once (0: no limit)
    bool admin_comment = true;  // put this node's part of the job record into its AdminComment (slurmdbd)
    // A part slurmdbd did not take gets further tries from the node's retrier until this long
    // after the job's end (0: none, the node's next epilog only), pausing at most
    // record_retry_pause between them (core/record_retry.hpp).
    double record_retry = 1800.0;
    double record_retry_pause = 300.0;
    // recovery (--auto-recover, --ckpt-dir)
    std::string ckpt_finder;    // path of acme-ckpt-find
    std::string ckpt_rules;     // checkpoints.toml
    double ckpt_timeout = 10.0; // seconds slurmstepd waits for the checkpoint search
    std::string gpucheck;       // gpucheck, to localise faults with no hardware evidence; empty: none
    // the pre-job health gate
    bool health_gate = false;
    std::string gate_helper;    // path of acme-health-gate
    std::string nvml = "libnvidia-ml.so.1";
    double gate_timeout = 8.0;
    // Seconds the node's resident gate waits for the next GPU job before it ends (0: none; a
    // gate process for every job). resident_gate.hpp says why it exists.
    double gate_resident = 300.0;
    // LLM-assisted diagnosis (off unless llm_endpoint= is given): the helper asks this
    // OpenAI-compatible server when the rules answer unknown or below llm_below.
    std::string llm_endpoint;   // http://HOST:PORT[/PREFIX]
    std::string llm_model;
    std::string llm_token_file; // root-only file with the bearer token; empty: none
    double llm_timeout = 8.0;   // the whole request; must leave room within timeout=
    double llm_below = 0.5;
};

struct ConfigResult {
    Config config;
    std::vector<std::string> errors;
};

// Installed locations the defaults come from.
struct Defaults {
    std::string_view rules, helper, labels, ckpt_finder, ckpt_rules, gate_helper;
};

ConfigResult parse_plugstack_args(const std::vector<std::string_view>& args, const Defaults& defaults);

}  // namespace acme::faultguard
