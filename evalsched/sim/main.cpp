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
#include "evalsched/sim/durations.hpp"
#include "evalsched/sim/experiment.hpp"
#include "evalsched/sim/policy.hpp"
#include "common/util/cli_checks.hpp"

using namespace acme::evalsched;
using namespace acme::evalsched::sim;

namespace {

double mean(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0 : s / static_cast<double>(v.size());
}

// Bad input: one line, exit 2, nothing run.
struct UsageError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

int parse_count(const std::string& text, const char* flag, int lo, int hi) {
    const bool digits = !text.empty() && text.size() <= 9 && text.find_first_not_of("0123456789") == std::string::npos;
    const int v = digits ? std::stoi(text) : -1;
    if (!digits || v < lo || v > hi) throw UsageError(fmt::format("{} \"{}\": want a whole number from {} to {}", flag, text.substr(0, 40), lo, hi));
    return v;
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
    std::string policies_list = "sequential,opencompass,opencompass-time,evalsched-trials,evalsched";
    std::string default_time = "4h";
    std::string interval = "30m";
    std::string durations_path;
    double checkpoint_gb = 0, ckpt_bytes = 0, load_bandwidth = 0;
    int seeds = 1;
    bool makespans = false;
    Scenario sc;
    double nic_gbps = 25, storage_gbps = 800;
    app.set_version_flag("--version", acme::version_line("evalsched-sim"), "print the version and exit");
    app.add_option("--suite", suite_path, "suite file")->capture_default_str();
    app.add_option("--nodes", nodes_list, "node counts, comma separated (e.g. 1,4,16)")->capture_default_str();
    app.add_option("--gpus-per-node", sc.gpus_per_node, "GPUs per node")->capture_default_str()->check(acme::util::number_between(1, 64, true));
    app.add_option("--params", sc.model.params_b, "model size, billions of parameters")->capture_default_str()->check(acme::util::number_between(0.1, 2000.0));
    auto* gb = app.add_option("--checkpoint-gb", checkpoint_gb, "bytes a trial reads, GB (default: 2 bytes per parameter)")->check(acme::util::number_between(0.001, 1e5));
    app.add_option("--ckpt-bytes", ckpt_bytes, "bytes a trial reads (the same as --checkpoint-gb, in bytes)")->check(acme::util::number_between(1, 1e14))->excludes(gb);
    app.add_option("--load-bandwidth", load_bandwidth, "bytes/s a trial loads its weights at (default: the cost model's init + PCIe copy)")->check(acme::util::number_between(1, 1e13));
    app.add_option("--nic-gbps", nic_gbps, "per-node NIC to shared storage, Gb/s")->capture_default_str()->check(acme::util::number_between(0.001, 1e6));
    app.add_option("--storage-gbps", storage_gbps, "shared storage aggregate, Gb/s")->capture_default_str()->check(acme::util::number_between(0.001, 1e7));
    app.add_option("--background-load", sc.background_load, "offered GPU load of background jobs, 0-0.95")->capture_default_str()->check(acme::util::number_between(0.0, 0.95));
    app.add_option("--default-time", default_time, "the partition's DefaultTime (for jobs without --time)")->capture_default_str();
    app.add_option("--policies", policies_list, "policies, comma separated")->capture_default_str();
    app.add_option("--seed", sc.seed, "first seed")->capture_default_str();
    app.add_option("--seeds", seeds, "number of seeds (seed, seed+1, ...)")->capture_default_str()->check(acme::util::number_between(1, 1000, true));
    app.add_option("--checkpoints", sc.checkpoints, "checkpoints to evaluate (continuous mode: > 1)")->capture_default_str()->check(acme::util::number_between(1, 1000, true));
    app.add_option("--interval", interval, "time between checkpoints in continuous mode")->capture_default_str();
    app.add_option("--history", sc.history_runs, "earlier evaluations whose runs seed evalsched's priors (0: the suite's priors only)")->capture_default_str()->check(acme::util::number_between(0, 1000, true));
    app.add_option("--durations", durations_path, "TSV dataset<TAB>seconds: measured inference time per dataset on one GPU, replacing the cost model");
    app.add_option("--launch-cost", sc.launch_cost_s, "seconds per GPU job: submit to command running plus end to GPUs free")->capture_default_str()->check(acme::util::number_between(0, 3600));
    app.add_option("--bf-interval", sc.bf_interval_s, "seconds between Slurm backfill passes (0: backfill at every event)")->capture_default_str()->check(acme::util::number_between(0, 10800));
    app.add_option("--replan-latency", sc.replan_latency_s, "seconds from a job end to evalschedd's next round")->capture_default_str()->check(acme::util::number_between(0, 3600));
    // Alignment with the cluster bench (tests/bench/evalsched-cluster), see Scenario.
    std::string oc_subsets = "on";
    app.add_option("--history-drift", sc.history_drift, "log sd by which each earlier evaluation's run times stray from today's")->capture_default_str()->check(acme::util::number_between(0, 5));
    app.add_option("--time-scale", sc.time_scale, "scales the simulator's own fixed seconds (OpenCompass's launch jitter, CPU submit latency, metric jobs)")->capture_default_str()->check(acme::util::number_between(0.001, 1000));
    app.add_option("--opencompass-subsets", oc_subsets, "on: mmlu, bbh, cmmlu, ceval, mmlu_pro, mgsm run as their OpenCompass subsets; off: whole")->capture_default_str()->check(CLI::IsMember({"on", "off"}));
    app.add_option("--sequential-gpus", sc.sequential_gpus, "GPUs of the sequential job (0: every GPU of its node)")->capture_default_str()->check(acme::util::number_between(0, 64, true));
    app.add_flag("--makespans", makespans, "also print one line per policy: makespan <policy> <seconds> (mean over seeds)");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);
        std::fprintf(stderr, "evalsched-sim: %s (see evalsched-sim --help)\n", e.what());
        return 2;
    }

    try {
        Suite suite;
        std::vector<int> node_counts;
        std::vector<std::string> policies;
        try {
            suite = load_suite(suite_path);
            const auto dt = parse_duration(default_time);
            const auto iv = parse_duration(interval);
            if (!dt) throw UsageError(fmt::format("--default-time \"{}\" is not a duration: write e.g. 4h", default_time));
            if (!iv) throw UsageError(fmt::format("--interval \"{}\" is not a duration: write e.g. 30m", interval));
            sc.default_time_s = *dt;
            sc.checkpoint_interval_s = *iv;
            for (const auto& n : split(nodes_list)) node_counts.push_back(parse_count(n, "--nodes", 1, 4096));
            if (node_counts.empty()) throw UsageError("--nodes is empty: give node counts, e.g. 4 or 1,4,16");
            policies = split(policies_list);
            if (policies.empty()) throw UsageError("--policies is empty: name at least one policy");
            for (const auto& p : policies)
                if (!make_policy(p))
                    throw UsageError(fmt::format("--policies: unknown policy \"{}\": use sequential, opencompass, opencompass-time, evalsched-trials or evalsched", p));
            if (!durations_path.empty()) sc.durations = load_durations(durations_path, suite);
        } catch (const SuiteError& e) {
            throw UsageError(e.what());
        } catch (const UsageError&) {
            throw;
        } catch (const std::invalid_argument& e) {
            throw UsageError(e.what());
        }
        sc.opencompass_subsets = oc_subsets == "on";
        sc.cpu_submit_latency_s *= sc.time_scale;
        sc.model.checkpoint_bytes = ckpt_bytes > 0 ? ckpt_bytes : checkpoint_gb > 0 ? checkpoint_gb * 1e9 : sc.model.params_b * 2e9;
        sc.load_bytes_per_s = load_bandwidth;
        sc.nic_bytes_per_s = nic_gbps * 1e9 / 8;
        sc.storage_bytes_per_s = storage_gbps * 1e9 / 8;
        const std::uint64_t first_seed = sc.seed;

        fmt::print("evalsched-sim: suite {} ({} datasets{}), {:g}B model, checkpoint {:.1f} GB, NIC {:g} Gb/s, storage {:g} Gb/s\n",
                   suite.name, suite.datasets.size(), sc.durations.empty() ? "" : ", measured durations", sc.model.params_b,
                   sc.model.checkpoint_bytes / 1e9, nic_gbps, storage_gbps);
        fmt::print("background: offered load {:.2f} drawn from AcmeTrace Seren GPU counts and durations "
                   "(Hu et al., NSDI'24, InternLM/AcmeTrace, CC BY 4.0); DefaultTime {}; eval nice {}\n",
                   sc.background_load, human_duration(sc.default_time_s), human_duration(sc.eval_nice_s));
        fmt::print("loop: bf_interval {:g}s{}, launch cost {:g}s per job, replanning {:g}s, priors from {} earlier evaluation{}{}, time scale {:g}\n",
                   sc.bf_interval_s, sc.bf_interval_s > 0 ? "" : " (backfill at every event)", sc.launch_cost_s, sc.replan_latency_s,
                   sc.history_runs, sc.history_runs == 1 ? "" : "s",
                   sc.history_runs == 0 ? " (the suite's priors only)" : fmt::format(" (drift {:g})", sc.history_drift), sc.time_scale);
        bool params_printed = false;
        for (const int nodes : node_counts) {
            sc.nodes = nodes;
            std::map<std::string, std::vector<double>> ratios;
            std::map<std::string, std::vector<double>> bytes, latencies, spans;
            for (int s = 0; s < seeds; ++s) {
                sc.seed = first_seed + static_cast<std::uint64_t>(s);
                const ScenarioResult r = run_scenario(suite, sc, policies);
                if (!params_printed) {
                    for (const auto& p : r.policies) fmt::print("parameters {}: {}\n", p.policy, p.parameters);
                    params_printed = true;
                }
                fmt::print("\nnodes={} gpus={} seed={}: work {:.1f} GPU-h (inference + preprocessing, no loads)\n", sc.nodes,
                           sc.nodes * sc.gpus_per_node, sc.seed, r.work_gpu_s / 3600);
                fmt::print("  {:<16} {:>10} {:>11} {:>12} {:>12} {:>6} {:>8}  {}\n", "policy", "makespan", "lower bound", "load GPU-h", "shared GB", "jobs", "timeouts",
                           sc.checkpoints > 1 ? "median scorecard latency / conservation" : "conservation");
                for (const auto& p : r.policies) {
                    const double med = median(p.latencies_s);
                    fmt::print("  {:<16} {:>10} {:>11} {:>12.2f} {:>12.1f} {:>6} {:>8}  {}{}\n", p.policy, human_duration(p.makespan_s),
                               human_duration(p.lower_bound_s), p.load_gpu_h,
                               p.shared_bytes / 1e9, p.gpu_jobs, p.timeouts, sc.checkpoints > 1 ? human_duration(med) + " / " : "",
                               p.conservation_error.empty() ? "every dataset once" : "BROKEN: " + p.conservation_error);
                    bytes[p.policy].push_back(p.shared_bytes / sc.checkpoints);
                    latencies[p.policy].push_back(med);
                    spans[p.policy].push_back(p.makespan_s);
                }
                const PolicyResult* es = r.find("evalsched");
                if (!es) continue;
                for (const auto& p : r.policies)
                    if (p.policy != "evalsched") ratios[p.policy + "/evalsched"].push_back(p.makespan_s / es->makespan_s);
                ratios["evalsched/lower_bound"].push_back(es->makespan_s / es->lower_bound_s);
                // The most any policy could reach against each baseline on this seed: evalsched's
                // makespan is at least its bound, so X/evalsched <= X / that bound.
                for (const auto& p : r.policies)
                    if (p.policy != "evalsched") ratios[p.policy + "/lower_bound"].push_back(p.makespan_s / es->lower_bound_s);
                if (sc.checkpoints > 1)
                    for (const auto& p : r.policies)
                        if (p.policy != "evalsched") ratios[p.policy + "/evalsched(median latency)"].push_back(median(p.latencies_s) / median(es->latencies_s));
            }
            fmt::print("\nratios nodes={} ({} seed{}, mean [min, max]):\n", sc.nodes, seeds, seeds > 1 ? "s" : "");
            for (const auto& [name, v] : ratios)
                fmt::print("  {} = {:.3f} [{:.2f}, {:.2f}]\n", name, mean(v), *std::min_element(v.begin(), v.end()),
                           *std::max_element(v.begin(), v.end()));
            for (const auto& [policy, v] : bytes)
                fmt::print("  shared-storage bytes per checkpoint {} = {:.1f} GB (nodes x checkpoint = {:.1f} GB)\n", policy,
                           *std::max_element(v.begin(), v.end()) / 1e9, sc.nodes * sc.model.checkpoint_bytes / 1e9);
            if (sc.checkpoints > 1)
                for (const auto& [policy, v] : latencies)
                    fmt::print("  median checkpoint-to-scorecard {} = {}\n", policy, human_duration(median(v)));
            // Machine-readable, for tests/bench/evalsched-cluster: in --policies order.
            if (makespans)
                for (const auto& p : policies) fmt::print("makespan {} {:.3f}\n", p, mean(spans[p]));
        }
    } catch (const UsageError& e) {
        std::fprintf(stderr, "evalsched-sim: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "evalsched-sim: %s\n", e.what());
        return 1;
    }
    return 0;
}
