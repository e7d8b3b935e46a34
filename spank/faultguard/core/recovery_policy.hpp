// What recovery does about one failed job on one node: drain this node (only on hardware
// evidence here, never on a guess), requeue the job (only for infrastructure causes, under the
// restart cap). Pure, so every branch is unit-tested.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/diagnose/engine.hpp"
#include "spank/faultguard/core/xid_actions.hpp"

namespace acme::recovery {

struct Inputs {
    diagnose::Diagnosis diagnosis;
    std::vector<diagnose::GpuEvent> gpu_events;  // this node's, during the job
    std::vector<int> job_gpus;                   // this node's GPU ids for the job
    int max_restarts = 0;                        // --auto-recover
    int restarts = 0;                            // Slurm's restart count of this run
    std::optional<bool> gpucheck_healthy;        // gpucheck's verdict when one was run
    std::string gpucheck_detail;
    // Set when the sampler's stall verdict named this node on GPU evidence (its GPUs spun while
    // the others idled, or fatal XIDs): why, for the drain reason.
    std::string stall_named_here;
    XidActions xids = builtin_xid_actions();     // which XIDs drain: load_xid_actions(rules dir)
};

struct Plan {
    bool drain = false;
    std::string drain_reason;   // "acme: gpu_lost XID 79 on GPU 2"
    bool requeue = false;
    std::string why;            // one line: what was decided and why
};

// A model's answer (LLM-assisted diagnosis) is never acted on: plan() drains and requeues on
// the rules' answers only, so configuring a model cannot drain a healthy node.
Plan plan(const Inputs& in);

}  // namespace acme::recovery
