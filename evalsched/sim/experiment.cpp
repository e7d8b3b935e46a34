#include "evalsched/sim/experiment.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "evalsched/sim/policy.hpp"

namespace acme::evalsched::sim {

const PolicyResult* ScenarioResult::find(const std::string& policy) const {
    for (const auto& p : policies)
        if (p.policy == policy) return &p;
    return nullptr;
}

double lower_bound(const Suite& suite, const Scenario& sc, const World& world, double* work_out) {
    const Truth& truth = world.truth();
    const CostModel& cost = truth.cost();
    double work = 0, min_metric = std::numeric_limits<double>::infinity(), chain = 0;
    const double stage = sc.model.checkpoint_bytes / std::min(sc.nic_bytes_per_s, sc.storage_bytes_per_s);
    // Every policy pays at least one job launch and one load of the weights.
    const double startup = sc.launch_cost_s + truth.startup_s(sc.model.checkpoint_bytes);
    for (const auto& d : suite.datasets) {
        const double run = truth.mean_run_s(d.name);
        work += run + truth.preprocess_s(d.name);
        const double metric = truth.metric_s(d.name);
        min_metric = std::min(min_metric, metric);
        // A shardable dataset can be cut fine enough that its own length never binds.
        const double piece = d.shard ? 0 : run / (d.gpus > 1 ? d.gpus * cost.multi_gpu_efficiency : 1.0);
        chain = std::max(chain, stage + startup + truth.preprocess_s(d.name) + piece + metric);
    }
    if (work_out) *work_out = work;
    // Integrate the GPUs the background left over from t = 0 until they hold the work.
    const auto& tl = world.eval_capacity_timeline();
    double area = 0, t_cap = 0;
    int free = 0;
    std::size_t i = 0;
    for (; i < tl.size() && tl[i].first <= 0; ++i) free = tl[i].second;
    double t = 0;
    for (;; ++i) {
        const double next = i < tl.size() ? tl[i].first : std::numeric_limits<double>::infinity();
        if (free > 0 && area + free * (next - t) >= work) {
            t_cap = t + (work - area) / free;
            break;
        }
        if (i >= tl.size()) throw std::runtime_error("lower bound: the background never leaves a GPU free");
        area += free * (next - t);
        t = next;
        free = tl[i].second;
    }
    return std::max(t_cap + (std::isfinite(min_metric) ? min_metric : 0), chain);
}

std::string check_conservation(const World& w, int checkpoints) {
    std::map<std::string, double> covered;  // "<ckpt>|<dataset>" -> fraction
    for (const auto& [key, count] : w.stats().pieces_done) {
        if (count != 1) return fmt::format("piece {} ran {} times", key, count);
        const auto a = key.find('|'), b = key.find('|', a + 1), c = key.find('|', b + 1);
        const int n = std::stoi(key.substr(c + 1));
        covered[key.substr(0, b)] += 1.0 / n;
    }
    const std::size_t expected = static_cast<std::size_t>(checkpoints) * w.suite().datasets.size();
    if (covered.size() != expected) return fmt::format("{} of {} datasets ran", covered.size(), expected);
    for (const auto& [key, f] : covered)
        if (std::abs(f - 1) > 1e-9) return fmt::format("{} ran {:.3f} of its samples", key, f);
    return "";
}

ScenarioResult run_scenario(const Suite& suite, const Scenario& sc, const std::vector<std::string>& policies) {
    ScenarioResult out;
    out.scenario = sc;
    for (const auto& name : policies) {
        auto policy = make_policy(name);
        if (!policy) throw std::invalid_argument(fmt::format("unknown policy \"{}\": use sequential, opencompass, opencompass-time, evalsched or evalsched-trials", name));
        World w(suite, sc, sc.background_load > 0);
        w.expect_scorecards(sc.checkpoints);
        for (int i = 0; i < sc.checkpoints; ++i) {
            const CheckpointArrival ckpt{fmt::format("step-{}", (i + 1) * 1000), i * sc.checkpoint_interval_s};
            w.at(ckpt.at, [&w, &policy, ckpt] { policy->on_checkpoint(w, ckpt); });
        }
        w.run(sc.checkpoints * sc.checkpoint_interval_s + 30 * 86400);
        PolicyResult r;
        r.policy = name;
        r.lower_bound_s = lower_bound(suite, sc, w, &out.work_gpu_s);
        r.parameters = policy->parameters(sc);
        r.latencies_s = w.scorecard_latencies();
        r.makespan_s = r.latencies_s.empty() ? 0 : r.latencies_s.front();
        r.load_gpu_h = w.stats().load_gpu_s / 3600;
        r.shared_bytes = w.storage().bytes_read();
        r.gpu_jobs = w.stats().gpu_jobs;
        r.timeouts = w.stats().timeouts;
        r.conservation_error = w.all_scored() ? check_conservation(w, sc.checkpoints) : "not every scorecard completed";
        out.policies.push_back(std::move(r));
    }
    return out;
}

}  // namespace acme::evalsched::sim
