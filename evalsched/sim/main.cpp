// evalsched-sim: replays evaluation policies side by side on a simulated Slurm cluster with
// background load from AcmeTrace, and prints makespans, load costs, shared-storage bytes and
// the ratios between policies (man evalsched-sim(1)).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "common/util/version.hpp"
#include "evalsched/core/duration.hpp"
#include "evalsched/core/suite.hpp"
#include "evalsched/sim/experiment.hpp"
#include "common/util/cli_checks.hpp"

using namespace acme::evalsched;
using namespace acme::evalsched::sim;

namespace {

double geomean(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += std::log(x);
    return v.empty() ? 0 : std::exp(s / static_cast<double>(v.size()));
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    if (v.empty()) return 0;
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string part; std::getline(in, part, ',');)
        if (!part.empty()) out.push_back(part);
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"evalsched-sim: compare evaluation scheduling policies on a simulated Slurm cluster"};
    std::string suite_path = "suites/core.toml";
    std::string nodes_list = "4";
    std::string policies_list = "sequential,opencompass,evalsched";
    std::string default_time = "4h";
    std::string interval = "30m";
    double checkpoint_gb = 0;
    int seeds = 1;
    Scenario sc;
    double nic_gbps = 25, storage_gbps = 800;
    app.set_version_flag("--version", acme::version_line("evalsched-sim"), "print the version and exit");
    app.add_option("--suite", suite_path, "suite file")->capture_default_str();
    app.add_option("--nodes", nodes_list, "node counts, comma separated (e.g. 1,4,16)")->capture_default_str();
    app.add_option("--gpus-per-node", sc.gpus_per_node, "GPUs per node")->capture_default_str()->check(acme::util::number_between(1, 64, true));
    app.add_option("--params", sc.model.params_b, "model size, billions of parameters")->capture_default_str()->check(acme::util::number_between(0.1, 2000.0));
    app.add_option("--checkpoint-gb", checkpoint_gb, "bytes a trial reads, GB (default: 2 bytes per parameter)");
    app.add_option("--nic-gbps", nic_gbps, "per-node NIC to shared storage, Gb/s")->capture_default_str()->check(acme::util::number_between(0.001, 1e6));
    app.add_option("--storage-gbps", storage_gbps, "shared storage aggregate, Gb/s")->capture_default_str()->check(acme::util::number_between(0.001, 1e7));
    app.add_option("--background-load", sc.background_load, "offered GPU load of background jobs, 0-0.95")->capture_default_str()->check(acme::util::number_between(0.0, 0.95));
    app.add_option("--default-time", default_time, "the partition's DefaultTime (for jobs without --time)")->capture_default_str();
    app.add_option("--policies", policies_list, "policies, comma separated")->capture_default_str();
    app.add_option("--seed", sc.seed, "first seed")->capture_default_str();
    app.add_option("--seeds", seeds, "number of seeds (seed, seed+1, ...)")->capture_default_str()->check(acme::util::number_between(1, 1000, true));
    app.add_option("--checkpoints", sc.checkpoints, "checkpoints to evaluate (continuous mode: > 1)")->capture_default_str()->check(acme::util::number_between(1, 1000, true));
    app.add_option("--interval", interval, "time between checkpoints in continuous mode")->capture_default_str();
    app.add_option("--history", sc.history_runs, "earlier runs per dataset in evalsched's priors")->capture_default_str()->check(acme::util::number_between(0, 1000, true));
    CLI11_PARSE(app, argc, argv);

    try {
        const Suite suite = load_suite(suite_path);
        const auto dt = parse_duration(default_time);
        const auto iv = parse_duration(interval);
        if (!dt) throw std::invalid_argument(fmt::format("--default-time \"{}\" is not a duration: write e.g. 4h", default_time));
        if (!iv) throw std::invalid_argument(fmt::format("--interval \"{}\" is not a duration: write e.g. 30m", interval));
        sc.default_time_s = *dt;
        sc.checkpoint_interval_s = *iv;
        sc.model.checkpoint_bytes = checkpoint_gb > 0 ? checkpoint_gb * 1e9 : sc.model.params_b * 2e9;
        sc.nic_bytes_per_s = nic_gbps * 1e9 / 8;
        sc.storage_bytes_per_s = storage_gbps * 1e9 / 8;
        const auto policies = split(policies_list);
        const std::uint64_t first_seed = sc.seed;

        fmt::print("evalsched-sim: suite {} ({} datasets), {:g}B model, checkpoint {:.1f} GB, NIC {:g} Gb/s, storage {:g} Gb/s\n",
                   suite.name, suite.datasets.size(), sc.model.params_b, sc.model.checkpoint_bytes / 1e9, nic_gbps, storage_gbps);
        fmt::print("background: offered load {:.2f} drawn from AcmeTrace Seren GPU counts and durations "
                   "(Hu et al., NSDI'24, InternLM/AcmeTrace, CC BY 4.0); DefaultTime {}; eval nice {}\n",
                   sc.background_load, human_duration(sc.default_time_s), human_duration(sc.eval_nice_s));
        bool params_printed = false;
        for (const auto& n_text : split(nodes_list)) {
            sc.nodes = std::stoi(n_text);
            if (sc.nodes < 1 || sc.nodes > 4096) throw std::invalid_argument(fmt::format("--nodes {}: use 1 to 4096", n_text));
            std::map<std::string, std::vector<double>> ratios;
            std::map<std::string, std::vector<double>> bytes, latencies;
            for (int s = 0; s < seeds; ++s) {
                sc.seed = first_seed + static_cast<std::uint64_t>(s);
                const ScenarioResult r = run_scenario(suite, sc, policies);
                if (!params_printed) {
                    for (const auto& p : r.policies) fmt::print("parameters {}: {}\n", p.policy, p.parameters);
                    params_printed = true;
                }
                fmt::print("\nnodes={} gpus={} seed={}: work {:.1f} GPU-h (inference + preprocessing, no loads)\n", sc.nodes,
                           sc.nodes * sc.gpus_per_node, sc.seed, r.work_gpu_s / 3600);
                fmt::print("  {:<12} {:>10} {:>11} {:>12} {:>12} {:>6} {:>8}  {}\n", "policy", "makespan", "lower bound", "load GPU-h", "shared GB", "jobs", "timeouts",
                           sc.checkpoints > 1 ? "median scorecard latency / conservation" : "conservation");
                for (const auto& p : r.policies) {
                    const double med = median(p.latencies_s);
                    fmt::print("  {:<12} {:>10} {:>11} {:>12.2f} {:>12.1f} {:>6} {:>8}  {}{}\n", p.policy, human_duration(p.makespan_s),
                               human_duration(p.lower_bound_s), p.load_gpu_h,
                               p.shared_bytes / 1e9, p.gpu_jobs, p.timeouts, sc.checkpoints > 1 ? human_duration(med) + " / " : "",
                               p.conservation_error.empty() ? "every dataset once" : "BROKEN: " + p.conservation_error);
                    bytes[p.policy].push_back(p.shared_bytes / sc.checkpoints);
                    latencies[p.policy].push_back(med);
                }
                const PolicyResult* es = r.find("evalsched");
                if (!es) continue;
                for (const auto& p : r.policies)
                    if (p.policy != "evalsched") ratios[p.policy + "/evalsched"].push_back(p.makespan_s / es->makespan_s);
                ratios["evalsched/lower_bound"].push_back(es->makespan_s / es->lower_bound_s);
                if (sc.checkpoints > 1)
                    for (const auto& p : r.policies)
                        if (p.policy != "evalsched") ratios[p.policy + "/evalsched(median latency)"].push_back(median(p.latencies_s) / median(es->latencies_s));
            }
            fmt::print("\nratios nodes={} ({} seed{}, geometric mean [min, max]):\n", sc.nodes, seeds, seeds > 1 ? "s" : "");
            for (const auto& [name, v] : ratios)
                fmt::print("  {} = {:.3f} [{:.2f}, {:.2f}]\n", name, geomean(v), *std::min_element(v.begin(), v.end()),
                           *std::max_element(v.begin(), v.end()));
            for (const auto& [policy, v] : bytes)
                fmt::print("  shared-storage bytes per checkpoint {} = {:.1f} GB (nodes x checkpoint = {:.1f} GB)\n", policy,
                           *std::max_element(v.begin(), v.end()) / 1e9, sc.nodes * sc.model.checkpoint_bytes / 1e9);
            if (sc.checkpoints > 1)
                for (const auto& [policy, v] : latencies)
                    fmt::print("  median checkpoint-to-scorecard {} = {}\n", policy, human_duration(median(v)));
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "evalsched-sim: %s\n", e.what());
        return 1;
    }
    return 0;
}
