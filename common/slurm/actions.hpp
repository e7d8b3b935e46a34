// libslurm wrapper: the node and job actions recovery takes, and what it asks first. Each
// action returns an empty string on success, else Slurm's error text. Needs SlurmUser/root,
// like scontrol.
#pragma once

#include <optional>
#include <string>

namespace acme::slurm {

std::string drain_node(const std::string& node, const std::string& reason);
// Requeues a batch job and makes it eligible at once (a requeued job otherwise waits 120 s).
std::string requeue_job(unsigned job_id);
// How many GPUs slurmctld says the node has (its gres gpu count); nullopt when it cannot be asked.
std::optional<int> node_gpu_count(const std::string& node);

}  // namespace acme::slurm
