// One scenario, every policy on the same seed, and the lower bound that keeps them honest.
#pragma once

#include <string>
#include <vector>

#include "evalsched/core/suite.hpp"
#include "evalsched/sim/world.hpp"

namespace acme::evalsched::sim {

struct PolicyResult {
    std::string policy;
    double lower_bound_s = 0;           // for this policy's world (see lower_bound)
    std::string parameters;
    double makespan_s = 0;              // first checkpoint's arrival to its complete scorecard
    std::vector<double> latencies_s;    // per checkpoint, arrival to complete scorecard
    double load_gpu_h = 0;
    double shared_bytes = 0;
    int gpu_jobs = 0;
    int timeouts = 0;
    std::string conservation_error;     // empty: every dataset covered exactly once
};

struct ScenarioResult {
    Scenario scenario;
    double work_gpu_s = 0;              // inference + preprocessing, one GPU each, no loads
    std::vector<PolicyResult> policies;
    const PolicyResult* find(const std::string& policy) const;
};

// max(the time the GPUs background jobs left over need to absorb the suite's work, plus the
// shortest metric job; the longest chain stage -> load -> unshardable dataset -> its metric),
// from the first checkpoint's arrival. The GPUs left over are those of the finished world
// itself: no policy could have used more than the background left it.
double lower_bound(const Suite& suite, const Scenario& scenario, const World& world, double* work_gpu_s = nullptr);

// Checks that every dataset of every checkpoint ran exactly once in full: each piece once, the
// pieces of a dataset adding up to the whole. Returns the first problem, or "".
std::string check_conservation(const World& world, int checkpoints);

ScenarioResult run_scenario(const Suite& suite, const Scenario& scenario, const std::vector<std::string>& policies);

}  // namespace acme::evalsched::sim
