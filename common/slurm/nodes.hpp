// libslurm wrapper: each node's state and reason as slurmctld holds them, for gpuacct --nodes.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace acme::slurm {

struct NodeHealth {
    std::string name;
    std::string state;   // sinfo's long form: "IDLE", "MIXED+DRAIN", "DOWN+NOT_RESPONDING"
    std::string reason;  // the admin's or acme's drain/down reason, empty when none
};

// slurm_load_node(SHOW_ALL). nullopt: slurmctld cannot be asked (error says why).
std::optional<std::vector<NodeHealth>> load_node_health(std::string& error);

// The state word for a node_state value (base state plus flags, joined with '+').
std::string node_state_text(unsigned node_state);

}  // namespace acme::slurm
