// The live straggler score: while a multi-node job runs, each node's sampler scores its own node
// against the job's typical node from the work rates the job's nodes share (stall_share), with
// gpuacct's formula (common/record/straggler.hpp) over the last look instead of the whole run,
// and publishes it as acme_job_node_slowness (textfile.hpp, gputrace(8)).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spank/gputrace/core/stall.hpp"

namespace acme::telemetry {

// `self`'s score among the states of the job's nodes (`expected`) written within `fresh` seconds
// of `now` that carry a work rate; nullopt when fewer than two such nodes, `self` among them, can
// be compared (a single-node job, peers not heard from yet, an idle typical node).
std::optional<double> live_slowness(const std::vector<NodeState>& states, const std::vector<std::string>& expected,
                                    std::string_view self, double now, double fresh);

}  // namespace acme::telemetry
