// gpucheck across nodes, one task per node under srun: rank 0 makes the ncclUniqueId and hands
// it to the other ranks over TCP; all ranks run an all-reduce together, then pairwise rounds
// (every node with every other, via ncclCommSplit) whose bandwidths rank 0 collects over the
// same sockets to name the bad node among the suspects.
#pragma once

#include <string>
#include <vector>

#include "tools/gpucheck/verdict.hpp"

namespace acme::gpucheck {

struct MultiNodeReport {
    double all_gbps = 0;                 // all ranks together
    std::vector<PairResult> pairs;
    std::vector<std::string> blamed;
    std::vector<std::string> nodes;      // by rank
};

// Runs on every rank; rank 0 returns the report (the others an empty one). Returns false with
// error when the bootstrap or NCCL fails.
bool run_multinode(int rank, int ranks, const std::string& root_host, int port, int cuda_device, const Thresholds& t,
                   bool pairs, MultiNodeReport& report, std::string& error);

}  // namespace acme::gpucheck
