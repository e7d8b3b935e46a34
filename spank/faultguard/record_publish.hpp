// Puts this node's part of the acme job record into the run's AdminComment in slurmdbd.
//
// Every node of a job writes its own part, during its own epilog, by read-merge-write: no
// collector, no EpilogSlurmctld, nothing on slurmctld's path. Two nodes that read the same
// value at once would overwrite each other's part, so a writer reads back after a random delay
// and writes again until its part has been seen in two reads in a row. The write happens inside
// the epilog, before the run's end is complete: a requeued job's next run (a new row in
// slurmdbd) cannot exist yet, so the part always lands on the run it describes.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/slurm/admin_comment.hpp"

namespace acme::faultguard {

struct PublishResult {
    bool published = false;
    bool no_accounting = false;  // the cluster has no slurmdbd: nothing to do, nothing to say
    std::string error;           // one line when it did not publish for another reason
    std::size_t bytes = 0;       // the AdminComment's size as written
    int writes = 0;
};

PublishResult publish_node_part(const slurm::JobRow& row, long long restart, const std::vector<std::string>& expected,
                                const std::string& node, const nlohmann::json& part, double budget_s);

}  // namespace acme::faultguard
