// gpucheck: is this node's GPU hardware healthy? Per GPU a BF16 GEMM throughput and an HBM
// copy-bandwidth check, across the node's GPUs an NCCL all-reduce; with --multinode (one task
// per node under srun) an all-reduce across nodes and pairwise rounds that name the bad node.
// Thresholds come from a config file. Exit 0: all passed; 1: something failed; 2: cannot run
// here (no GPU, bad arguments).
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tools/gpucheck/verdict.hpp"
#include "common/slurm/jobs.hpp"
#include "common/util/install_paths.hpp"
#include "common/util/parse.hpp"
#include "common/util/version.hpp"
#include "tools/gpucheck/devices.hpp"
#include "tools/gpucheck/measure.hpp"
#include "tools/gpucheck/multinode.hpp"
#include "common/util/cli_checks.hpp"


namespace {

using namespace acme::gpucheck;

int env_int(const char* name, int fallback) {
    const char* v = getenv(name);
    const auto n = v ? acme::util::parse_int(v) : std::nullopt;
    return n ? static_cast<int>(*n) : fallback;
}

void print_node(const NodeResult& node) {
    fmt::print("{}: {}\n", node.node, node.pass ? "PASS" : "FAIL");
    for (const auto& g : node.gpus) {
        fmt::print("  GPU {} ({}): GEMM {} TFLOP/s, HBM {} GB/s: {}\n", g.id, g.name,
                   g.gemm_tflops ? fmt::format("{:.1f}", *g.gemm_tflops) : "-",
                   g.hbm_gbps ? fmt::format("{:.0f}", *g.hbm_gbps) : "-", g.pass ? "PASS" : "FAIL");
        for (const auto& f : g.failures) fmt::print("    {}\n", f);
    }
    if (node.allreduce_gbps) fmt::print("  NCCL all-reduce over {} GPUs: {:.1f} GB/s bus bandwidth\n", node.gpus.size(), *node.allreduce_gbps);
    for (const auto& f : node.failures)
        if (f.rfind("GPU ", 0) != 0) fmt::print("  {}\n", f);
}

}  // namespace

int main(int argc, char** argv) {
    std::string config_path{acme::paths::kGpucheckConfig}, gpus;
    bool json = false, quick = false, multinode = false, pairs = false;
    int port = 29555;
    CLI::App app{"gpucheck: GPU, HBM and NCCL health check of this node (or, under srun, of several)"};
    app.set_version_flag("--version", acme::version_line("gpucheck"), "print the version and exit");
    app.add_option("-c,--config", config_path, "thresholds file")->capture_default_str();
    app.add_option("--gpus", gpus, "Slurm GPU ids (device minor numbers) to check, e.g. 0,1 (default: all)");
    app.add_flag("--json", json, "one JSON object");
    app.add_flag("--quick", quick, "fewer iterations (what faultguard runs after a failure)");
    app.add_flag("--multinode", multinode, "one task per node under srun: all-reduce across the nodes");
    app.add_flag("--pairs", pairs, "with --multinode: pairwise rounds that name the bad node");
    app.add_option("--port", port, "TCP port rank 0 listens on for the NCCL id")->check(acme::util::number_between(1024, 65535, true));
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) ? 2 : 0;
    }

    Thresholds t;
    {
        std::ifstream in(config_path);
        if (!in) {
            fmt::print(stderr, "gpucheck: cannot read {}: pass --config FILE\n", config_path);
            return 2;
        }
        std::stringstream ss;
        ss << in.rdbuf();
        try {
            t = parse_thresholds(ss.str(), config_path);
        } catch (const std::exception& e) {
            fmt::print(stderr, "gpucheck: {}\n", e.what());
            return 2;
        }
    }
    if (quick) {
        t.iterations = std::max(3, t.iterations / 4);
        t.gemm_n = std::min(t.gemm_n, 4096);
    }
    const auto ids = acme::util::parse_id_list(gpus);
    if (!ids) {
        fmt::print(stderr, "gpucheck: --gpus {}: want GPU ids such as 0,1 or 0-7\n", acme::util::printable(gpus));
        return 2;
    }
    std::string error;
    const auto devices = find_devices(*ids, error);
    if (devices.empty()) {
        fmt::print(stderr, "gpucheck: {}; nothing to check on this machine\n", error);
        return 2;
    }

    if (multinode) {
        const int rank = env_int("SLURM_PROCID", -1), ranks = env_int("SLURM_NTASKS", -1);
        const char* nodelist = getenv("SLURM_JOB_NODELIST");
        if (rank < 0 || ranks < 2 || !nodelist) {
            fmt::print(stderr, "gpucheck: --multinode runs under srun with one task per node (SLURM_PROCID, SLURM_NTASKS)\n");
            return 2;
        }
        const auto hosts = acme::slurm::expand_hostlist(nodelist);
        MultiNodeReport report;
        if (!run_multinode(rank, ranks, hosts.empty() ? "localhost" : hosts.front(), port, devices.front().cuda, t, pairs,
                           report, error)) {
            fmt::print(stderr, "gpucheck: rank {}: {}\n", rank, error);
            return 1;
        }
        if (rank != 0) return 0;
        const bool pass = report.all_gbps >= t.pair_gbps && report.blamed.empty();
        if (json) {
            nlohmann::json j = {{"ranks", ranks}, {"allreduce_gbps", report.all_gbps}, {"blamed", report.blamed},
                                {"pass", pass}};
            for (const auto& p : report.pairs) j["pairs"].push_back({{"a", p.a}, {"b", p.b}, {"gbps", p.busbw_gbps}});
            std::cout << j.dump() << "\n";
        } else {
            fmt::print("all-reduce across {} nodes: {:.1f} GB/s bus bandwidth\n", ranks, report.all_gbps);
            for (const auto& p : report.pairs)
                fmt::print("  {} <-> {}: {:.1f} GB/s{}\n", p.a, p.b, p.busbw_gbps, p.busbw_gbps < t.pair_gbps ? " SLOW" : "");
            if (!report.blamed.empty())
                for (const auto& n : report.blamed) fmt::print("bad node: {} (slow in every pair it was in)\n", n);
        }
        return pass ? 0 : 1;
    }

    NodeResult node;
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    node.node = getenv("SLURMD_NODENAME") ? getenv("SLURMD_NODENAME") : host;
    std::vector<int> cuda_ids;
    for (const auto& d : devices) {
        GpuResult g;
        g.id = d.id;
        g.name = d.name;
        std::string e;
        g.gemm_tflops = gemm_tflops(d.cuda, t.gemm_n, t.iterations, e);
        g.hbm_gbps = copy_gbps(d.cuda, t.copy_bytes, t.iterations, e);
        node.gpus.push_back(std::move(g));
        cuda_ids.push_back(d.cuda);
    }
    if (cuda_ids.size() > 1) {
        std::string e;
        node.allreduce_gbps = allreduce_busbw_local(cuda_ids, t.allreduce_bytes, t.iterations, e);
    }
    judge(node, t);
    if (json)
        std::cout << to_json(node).dump() << "\n";
    else
        print_node(node);
    return node.pass ? 0 : 1;
}
