// gpucheck's judgement, apart from CUDA and NCCL so it is unit-tested on any machine:
// thresholds from a config file, pass/fail per GPU and node, and the pairwise search that
// names the bad node among suspects (a node is bad when every pair it is in is slow, while
// some pair without it is fast).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace acme::gpucheck {

struct Thresholds {
    double gemm_tflops = 0;       // per GPU, BF16 GEMM; 0: not checked
    double hbm_gbps = 0;          // per GPU, device-to-device copy bandwidth
    double allreduce_gbps = 0;    // per node, NCCL all-reduce bus bandwidth across its GPUs
    double pair_gbps = 0;         // per pair of nodes, NCCL all-reduce bus bandwidth
    int gemm_n = 8192;            // GEMM size (n x n x n)
    long long copy_bytes = 1LL << 30;
    long long allreduce_bytes = 1LL << 28;
    int iterations = 20;
};

// TOML: [thresholds] gemm_tflops, hbm_gbps, allreduce_gbps, pair_gbps; [sizes] gemm_n,
// copy_bytes, allreduce_bytes, iterations. Throws std::runtime_error "file:line: ..." on a bad
// file (unknown keys included).
Thresholds parse_thresholds(const std::string& text, const std::string& source_name);

struct GpuResult {
    int id = -1;                 // Slurm's GPU id (the device minor number)
    std::string name;
    std::optional<double> gemm_tflops, hbm_gbps;
    bool pass = true;
    std::vector<std::string> failures;
};

struct NodeResult {
    std::string node;
    std::vector<GpuResult> gpus;
    std::optional<double> allreduce_gbps;
    bool pass = true;
    std::vector<std::string> failures;
};

// Fills pass/failures from the measurements and the thresholds.
void judge(NodeResult& node, const Thresholds& t);

struct PairResult {
    std::string a, b;
    double busbw_gbps = 0;
};

// Nodes to blame: those slow in every pair they were in, when at least one pair was fast.
// All pairs slow: nothing can be said about any single node (empty).
std::vector<std::string> blame(const std::vector<PairResult>& pairs, double min_gbps);

// Round-robin pairings of n nodes (circle method): every node meets every other once over
// n-1 rounds (n rounded up to even; index n means "sits out").
std::vector<std::vector<std::pair<int, int>>> pair_rounds(int n);

nlohmann::json to_json(const NodeResult& node);

}  // namespace acme::gpucheck
