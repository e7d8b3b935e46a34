// What recovery does about one failed job on one node: drain this node (only on hardware
// evidence here that the job cannot make itself, never on a guess), requeue the job (only for
// infrastructure causes, under the restart cap). Pure, so every branch is unit-tested.
//
// Evidence a job cannot fake: an XID or ECC event the driver reported on one of its GPUs, or
// gpucheck failing on the node after the job. A stall verdict's localisation is not such
// evidence: a job can busy-wait on one node and sleep on the others, and its GPUs then "spin
// while the others idle" exactly as a hung collective's do. A node named that way is checked
// with gpucheck and, unless gpucheck fails it, stays in service; the requeued job avoids it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/diagnose/engine.hpp"
#include "common/recovery/xid_actions.hpp"

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
    // the others idled, or fatal XIDs): why. Never a drain reason on its own (above).
    std::string stall_named_here;
    XidActions xids = builtin_xid_actions();     // which XIDs drain: load_xid_actions(rules dir)
    // The per-user bound on drains (plugstack drain_per_user; 0: none), and how many nodes the
    // job's uid already holds drained (drains_by_uid over slurmctld's reasons).
    int drain_per_user = 0;
    int drained_by_uid = 0;
    long long uid = -1;
};

// The tag a drain reason ends with, so the drains of one uid can be counted from slurmctld's
// node reasons on any node: " (job 123 uid 1001)". The uid, not the name: sinfo -R is world-readable.
std::string drain_owner_tag(long long job, long long uid);
// How many of `reasons` are acme's drains for jobs of `uid`.
int drains_by_uid(const std::vector<std::string>& reasons, long long uid);

struct Plan {
    bool drain = false;
    std::string drain_reason;   // "acme: gpu_lost XID 79 on GPU 2"
    bool requeue = false;
    bool avoid_node = false;    // the requeued job is kept off this node (the stall named it)
    std::string why_not_drained;  // the per-user bound held a drain back
    std::string why;            // one line: what was decided and why
};

// A model's answer (LLM-assisted diagnosis) is never acted on: plan() drains and requeues on
// the rules' answers only, so configuring a model cannot drain a healthy node.
Plan plan(const Inputs& in);

}  // namespace acme::recovery
