// Puts this node's part of the acme job record into the run's AdminComment in slurmdbd.
//
// Every node of a job writes its own part by read-merge-write: no collector, no
// EpilogSlurmctld, nothing on slurmctld's path. Two nodes that read the same value at once
// would overwrite each other's part, so a writer reads back after a random delay and writes
// again until its part has been seen in two reads in a row. That takes seconds, so the epilog
// hands it to a detached process (acme-faultguard-epilog --publish) and the node is released
// at once. By then a requeued job's next run may already be a new row in slurmdbd: a writer
// reads and writes its own run's row (common/slurm/run_row.hpp: by the run's submit and start
// times), never "the newest", so its part lands on its run whenever it comes. The nodes take turns
// (core/publish_pacing.hpp); a part slurmdbd did not take waits in the outbox (record_outbox.hpp)
// for the node's record retrier (record_retrier.hpp) and, after its rounds, the next epilog.

#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/slurm/admin_comment.hpp"
#include "spank/faultguard/core/publish_pacing.hpp"

namespace acme::faultguard {

struct PublishResult {
    bool published = false;
    bool no_accounting = false;  // the cluster has no slurmdbd: nothing to do, nothing to say
    bool unreachable = false;    // slurmdbd did not answer: worth another try later
    bool out_of_time = false;    // the budget ran out before the part was seen: worth another try too
    std::string error;           // one line when it did not publish for another reason
    std::size_t bytes = 0;       // the AdminComment's size as written
    int writes = 0;
    // Why a node wrote more than once: each rewrite follows a read that found its part undone by
    // another node's write, during the job's turns (a node whose turn came while this node's
    // read-merge-write was still on its way to slurmdbd) or after them (another rewrite, a late
    // writer). The line says so; tests/bench/record-scale's writes a node are made of these.
    int undone_in_turns = 0, undone_after = 0;
    double slowest_write_s = 0;  // the longest read-merge-write: what a write slot must hold
};

// run: the run's row among the job's (slurm::run_selector: its submit and start times as
// slurmctld gave them); all zero: the job's newest row.
PublishResult publish_node_part(const slurm::JobRow& row, long long restart, const slurm::RunSelector& run,
                                const std::vector<std::string>& expected, const std::string& node,
                                const nlohmann::json& part, const PublishPacing& pacing);

// The result's line for a log ("job 5 on n1: record in AdminComment (812 bytes, 1 write, slowest
// 40 ms)\n"; a node that wrote again says why: "2 writes (undone 1 time during the turns, 0 after)");
// "" when the cluster has no slurmdbd.
std::string publish_result_line(long long job, const std::string& node, const PublishResult& r);

}  // namespace acme::faultguard
