// The straggler score of a multi-node job: per node, how much slower its GPUs work than the job's
// typical node. One formula for both places it shows: gpuacct's job view and --json (over the
// run) and the sampler's live Prometheus gauge acme_job_node_slowness (over its last look). In synchronous training every step waits
// for the slowest rank, so one slow node (throttled, a degraded link, a noisy neighbour) slows
// the whole job; this names it.
//
//   slowness(node) = W(typical) / W(node),  W = the node's mean GPU work rate over the run
//
// W is the mean over the node's GPUs of the GPM SM activity when every node has it, else of the
// GPU utilisation (NVML's share of time a kernel ran). The typical node is the median node by W;
// with an even count the faster of the two middle ones, so in a 2-node job the faster node is
// the reference. 1.00 is typical; 2.00 means the node did half the typical node's work per
// second. W is floored at 1 % so an idle node gets a large, finite score. No scores with fewer
// than two nodes with data, or when the typical node itself is idle (nothing to compare).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace acme::record {

// One node's GPU means over the run (percent), from its per-GPU summaries.
struct NodeWork {
    std::string node;
    std::optional<double> util, sm;
};

struct NodeSlowness {
    std::string node;
    double score = 1;          // 1.00 typical, higher slower
    double work = 0;           // this node's W, percent
    double typical = 0;        // the typical node's W, percent
    std::string signal;        // "SM activity" or "GPU utilisation"
};

// In the order given; empty when there is nothing to compare.
std::vector<NodeSlowness> straggler_scores(const std::vector<NodeWork>& nodes);

// A node this much slower than the typical one is called out in the notes.
inline constexpr double kStragglerNote = 1.25;

}  // namespace acme::record
