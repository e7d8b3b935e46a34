// Stall verdicts at the job's own pace, on a simulated clock (tests/unit/stall_sim.hpp drives the
// sampler's NodeTracker and judge() as stall_watch.cpp does, one GPU sample a second, a look
// every 2 s). Jobs step every 2 s, 10 s and 60 s (+-10 % jitter); between two steps nothing of
// theirs shows (the hard case: GPU work the samples miss), except the data loader reading the
// next batch (1-50 MB) at each step. Prints, per configuration:
//  - hang to verdict, p95, in the job's steps, from the moment it hung (and from its last step),
//    for hangs once the pace is learned, of the kinds the paper describes: a NCCL hang (GPUs
//    spin, a host thread spin-waits on them, no I/O) and a deadlock (GPUs idle, the processes
//    asleep); both still trickle 0-4 KiB/s of reads (a monitoring thread). Target: within 3 steps
//    for 2-10 s steps.
//  - false verdicts over healthy jobs (target 0): each pauses every 5-15 minutes for a 30-150 s
//    checkpoint save (writing 1-500 MB/s, ending in a 0-20 s fsync asleep on the disk), every
//    10-30 minutes for a 60-300 s evaluation pass (GPUs busy, no step), waits 3-10 steps for its
//    data loader in one step of 50 (reading 0.1-10 MB/s), and one job in three pauses 30-120 s
//    for host-only work (an upload through sockets, a recompilation: a core busy, no I/O).
//  - hang to verdict for jobs hung before a pace is learned (the default windows).
// Configurations: the shipped keys with the job's processes seen (the discriminating signal,
// job_activity.hpp), k 2, and without the signal (processes not seen: the floor), floor 0
// without the signal (what the floor was for), the fixed windows (k 0) as the baseline.
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
using Rng = std::mt19937_64;

double uniform(Rng& rng, double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }

// When the pace is surely learned: the warm-up, then 25 (jittered, waited) steps.
double learned_by(double step) { return kWarmup + 25 * step * 1.5; }

// Trains from `from` to `to` at `step`: the step times into `job`, and one data-loader wait of
// 3-10 steps in one step of 50, its reads an io span. Returns when the last step (or wait) ended.
double train(test::SimJob& job, double step, double from, double to, Rng& rng) {
    double t = from;
    while (t < to) {
        job.steps.push_back(t);
        if (uniform(rng, 0, 1) < 0.02) {
            const double wait = step * uniform(rng, 3, 10);
            job.io.push_back({t + 1, t + wait, uniform(rng, 1e5, 1e7)});
            t += wait;
        } else {
            t += step * uniform(rng, 0.9, 1.1);
        }
    }
    return t;
}

test::SimJob base(bool seen, Rng& rng) {
    test::SimJob job;
    job.processes_seen = seen;
    job.step_io = uniform(rng, 1e6, 5e7);
    return job;
}

double p95(std::vector<double> v) {
    if (v.empty()) return -1;
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(0.95 * static_cast<double>(v.size() - 1) + 0.5)];
}

struct Hangs {
    double from_hang = -1, from_step = -1;  // p95, s
    int missed = 0;                          // no verdict in the simulated hour after the hang
};

Hangs hangs(const StallConfig& c, double step, bool spins, bool learned, bool seen, int jobs, Rng& rng) {
    std::vector<double> after_hang, after_step;
    Hangs h;
    for (int j = 0; j < jobs; ++j) {
        auto job = base(seen, rng);
        job.hang = learned ? uniform(rng, learned_by(step), learned_by(step) + 1200) : uniform(rng, kWarmup + step, kWarmup + 10 * step);
        train(job, step, 1, job.hang, rng);
        job.end = job.hang + 3600;
        job.hang_spins = spins;
        job.hang_io = uniform(rng, 0, 4096);
        job.hang_cpu = spins ? 1 : uniform(rng, 0, 0.05);
        const auto r = test::simulate(c, job);
        if (!r.verdict_at) {
            ++h.missed;
            continue;
        }
        after_hang.push_back(*r.verdict_at - job.hang);
        after_step.push_back(*r.verdict_at - r.last_step);
    }
    h.from_hang = p95(after_hang);
    h.from_step = p95(after_step);
    return h;
}

int false_verdicts(const StallConfig& c, double step, bool seen, int jobs, Rng& rng) {
    int bad = 0;
    for (int j = 0; j < jobs; ++j) {
        auto job = base(seen, rng);
        job.end = learned_by(step) + 3600;
        double next_save = uniform(rng, 300, 900), next_eval = uniform(rng, 600, 1800);
        double next_host = j % 3 == 0 ? uniform(rng, 600, 1800) : 1e18;
        double t = 1;
        while (t < job.end) {
            const double until = std::min({next_save, next_eval, next_host, job.end});
            // A pause starts when a step ends; training resumes a step after it ends.
            t = train(job, step, t, until, rng);
            if (t >= job.end) break;
            if (next_save <= until) {
                const double pause = uniform(rng, 30, 150), fsync = uniform(rng, 0, std::min(20.0, pause / 2));
                job.io.push_back({t, t + pause - fsync, uniform(rng, 1e6, 5e8)});
                job.disk_wait.emplace_back(t + pause - fsync, t + pause);
                t += pause + step;
                next_save = t + uniform(rng, 300, 900);
            } else if (next_eval <= until) {
                const double pause = uniform(rng, 60, 300);
                job.gpu_busy.emplace_back(t, t + pause);
                t += pause + step;
                next_eval = t + uniform(rng, 600, 1800);
            } else {
                const double pause = uniform(rng, 30, 120);
                job.cpu.push_back({t, t + pause, 1});
                t += pause + step;
                next_host = 1e18;
            }
        }
        if (test::simulate(c, job).verdict_at) ++bad;
    }
    return bad;
}

void row(const char* name, const StallConfig& c, bool seen, int jobs, Rng& rng) {
    std::string line;
    int missed = 0;
    for (const bool spins : {true, false}) {
        line += spins ? "NCCL hang (GPUs spin)" : "; deadlock (GPUs idle)";
        for (const double step : {2.0, 10.0, 60.0}) {
            const auto h = hangs(c, step, spins, true, seen, jobs, rng);
            missed += h.missed;
            char buf[160];
            std::snprintf(buf, sizeof buf, "%s %g s steps %.1f (%.1f)", step == 2 ? "" : ",", step, h.from_hang / step,
                          h.from_step / step);
            line += buf;
        }
    }
    int bad = 0;
    for (const double step : {2.0, 10.0, 60.0}) bad += false_verdicts(c, step, seen, jobs, rng);
    std::printf("stall cadence, %s: hang to verdict p95 in steps from the hang (from the last step): %s%s; "
                "false verdicts %d over %d healthy jobs (target 0)\n",
                name, line.c_str(), missed ? (" (" + std::to_string(missed) + " hangs never called)").c_str() : "",
                bad, 3 * jobs);
}

}  // namespace

int main(int argc, char** argv) {
    const int jobs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 200;
    const unsigned long long seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : std::random_device{}();
    Rng rng(seed);
    std::printf("stall cadence bench: simulated clock, 1 s GPU samples, a look every 2 s, %d jobs per figure, seed %llu\n",
                jobs, seed);
    StallConfig c;
    c.probe = 2;
    row("shipped keys, processes seen (k 3)", c, true, jobs, rng);
    auto k2 = c;
    k2.cadence.k = 2;
    row("k 2, processes seen", k2, true, jobs, rng);
    row("shipped keys, processes not seen (the 600 s floor)", c, false, jobs, rng);
    auto floor0 = c;
    floor0.cadence.floor = 0;
    row("floor 0, processes not seen (what the floor guards)", floor0, false, jobs, rng);
    auto fixed = c;
    fixed.cadence.k = 0;
    row("fixed windows (k 0, the baseline)", fixed, true, jobs, rng);
    const auto early = hangs(c, 2, true, false, true, jobs, rng), early_idle = hangs(c, 2, false, false, true, jobs, rng);
    std::printf("stall cadence, no cadence (hung within 10 steps of the warm-up's end): p95 %.0f s spinning, %.0f s idle "
                "from the hang (the default windows: %.0f s, %.0f s)\n",
                early.from_hang, early_idle.from_hang, c.spin_window, c.idle_window);
    return 0;
}
