// Stall verdicts at the job's own pace, on a simulated clock (tests/unit/stall_sim.hpp drives the
// sampler's NodeTracker and judge() as stall_watch.cpp does): prints, per configuration,
//  - hang to verdict (the job's last step to the verdict), p95 over jobs stepping every 2 s,
//    10 s and 60 s (+-10 % jitter) that hang once their pace is learned, their GPUs spinning; in
//    seconds and in the job's steps (target: within 3 steps for 2-10 s where the floor allows);
//    then the same for jobs with a data-loader hiccup (a 3-step wait) in 1 step of 50, which
//    their longest step learns;
//  - false verdicts over healthy jobs of the same paces, hiccups included, that pause 30-150 s
//    for checkpoint saves every 5-15 minutes, half of them saves the sampler cannot see
//    (target 0 at the shipped keys);
//  - hang to verdict for jobs that hang before a pace is learned (the fixed windows).
// The fixed windows (stall_cadence_k=0) are the baseline, measured in the same run.
// Usage: stall-cadence-bench [JOBS] [SEED]; the seed is random unless given, and printed.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "spank/gputrace/core/stall.hpp"
#include "tests/unit/stall_sim.hpp"

using namespace acme;
using telemetry::StallConfig;

namespace {

constexpr double kWarmup = 600;  // the shipped stall_warmup

// A job stepping every `step` s from `from` to `to`, jittered, with `hiccups` a 3-step wait in
// one step of 50.
std::vector<double> steps_of(double step, double from, double to, bool hiccups, std::mt19937_64& rng) {
    std::uniform_real_distribution<double> jitter(0.9, 1.1), u(0, 1);
    std::vector<double> out;
    for (double t = from; t < to; t += step * jitter(rng) * (hiccups && u(rng) < 0.02 ? 3 : 1)) out.push_back(t);
    return out;
}

// When the pace is surely learned: the warm-up, then 25 (jittered, hiccuped) steps.
double learned_by(double step) { return kWarmup + 25 * step * 1.5; }

double p95(std::vector<double> v) {
    if (v.empty()) return -1;
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(0.95 * static_cast<double>(v.size() - 1) + 0.5)];
}

struct Hangs {
    double p95_s = -1;
    int missed = 0;  // hung jobs with no verdict in the simulated hour after the hang
};

Hangs hangs(const StallConfig& c, double step, bool spins, bool learned, bool hiccups, int jobs, std::mt19937_64& rng) {
    std::vector<double> quiet;
    Hangs h;
    for (int j = 0; j < jobs; ++j) {
        // Hung once the pace is learned, or within 10 steps of the warm-up's end (not yet).
        std::uniform_real_distribution<double> when(learned ? learned_by(step) : kWarmup + step,
                                                    learned ? learned_by(step) + 1200 : kWarmup + 10 * step);
        test::SimJob job;
        job.hang = when(rng);
        job.steps = steps_of(step, 1, job.hang, hiccups, rng);
        job.end = job.hang + 3600;
        job.hang_spins = spins;
        const auto r = test::simulate(c, job);
        if (r.verdict_at) quiet.push_back(*r.verdict_at - r.last_step);
        else ++h.missed;
    }
    h.p95_s = p95(quiet);
    return h;
}

// Healthy: trains to the end, saving a checkpoint every 5-15 minutes for 30-150 s with its GPUs
// idle and its log quiet; every other job saves where the sampler cannot see (no --ckpt-dir).
int false_verdicts(const StallConfig& c, double step, int jobs, std::mt19937_64& rng) {
    std::uniform_real_distribution<double> every(300, 900), pause(30, 150);
    int bad = 0;
    for (int j = 0; j < jobs; ++j) {
        test::SimJob job;
        job.end = learned_by(step) + 2400;
        // A save starts at a step's end; the next step ends a step after the save.
        double t = 1;
        while (t < job.end) {
            for (const double s : steps_of(step, t, std::min(t + every(rng), job.end), true, rng)) job.steps.push_back(s);
            const double save = job.steps.back(), resume = save + pause(rng);
            if (j % 2 == 1) job.ckpt_writes.emplace_back(save, resume);
            t = resume + step;
        }
        if (test::simulate(c, job).verdict_at) ++bad;
    }
    return bad;
}

// Hang to verdict p95 for each pace: " 2 s steps 8 s = 4.0 steps, ...".
std::string paces(const StallConfig& c, bool hiccups, int jobs, std::mt19937_64& rng) {
    std::string line;
    int missed = 0;
    for (const double step : {2.0, 10.0, 60.0}) {
        const auto h = hangs(c, step, true, true, hiccups, jobs, rng);
        missed += h.missed;
        char buf[128];
        std::snprintf(buf, sizeof buf, "%s %g s steps %.0f s = %.1f steps", step == 2 ? "" : ",", step, h.p95_s,
                      h.p95_s / step);
        line += buf;
    }
    if (missed) line += " (" + std::to_string(missed) + " hangs never called)";
    return line;
}

void row(const char* name, const StallConfig& c, int jobs, std::mt19937_64& rng) {
    const std::string steady = paces(c, false, jobs, rng), hiccuped = paces(c, true, jobs, rng);
    int bad = 0;
    for (const double step : {2.0, 10.0, 60.0}) bad += false_verdicts(c, step, jobs, rng);
    std::printf("stall cadence, %s: hang to verdict p95%s; with hiccups%s; false verdicts %d over %d healthy jobs with "
                "30-150 s checkpoint pauses (target 0)\n",
                name, steady.c_str(), hiccuped.c_str(), bad, 3 * jobs);
}

}  // namespace

int main(int argc, char** argv) {
    const int jobs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 200;
    const unsigned long long seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : std::random_device{}();
    std::mt19937_64 rng(seed);
    std::printf("stall cadence bench: simulated clock, 1 s GPU samples, a look every 2 s, %d jobs per figure, seed %llu\n",
                jobs, seed);
    StallConfig c;
    c.probe = 2;
    row("shipped keys (k 3, floor 600 s)", c, jobs, rng);
    auto lowered = c;
    lowered.cadence.floor = 180;
    row("floor 180 s (k 3)", lowered, jobs, rng);
    auto fast = c;
    fast.cadence.floor = 0;
    row("floor 0 (k 3)", fast, jobs, rng);
    auto fixed = c;
    fixed.cadence.k = 0;
    row("fixed windows (k 0, the baseline)", fixed, jobs, rng);
    const auto idle = hangs(c, 2, false, true, false, jobs, rng), idle_fixed = hangs(fixed, 2, false, true, false, jobs, rng);
    std::printf("stall cadence, a 2 s job hung with its GPUs idle: p95 %.0f s at the shipped keys vs %.0f s at the fixed "
                "%.0f s idle window: ratio %.1f\n",
                idle.p95_s, idle_fixed.p95_s, c.idle_window, idle_fixed.p95_s / idle.p95_s);
    const auto early = hangs(c, 2, true, false, false, jobs, rng), early_idle = hangs(c, 2, false, false, false, jobs, rng);
    std::printf("stall cadence, no pace learned yet (hung within 10 steps of the warm-up's end): p95 %.0f s spinning, "
                "%.0f s idle (the fixed windows: %.0f s, %.0f s)\n",
                early.p95_s, early_idle.p95_s, c.spin_window, c.idle_window);
    return 0;
}
