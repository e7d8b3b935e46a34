// A job on a simulated clock, judged as the sampler judges it (stall_watch.cpp): one GPU sample
// a second, a look at the job's files every stall_probe seconds, the verdict at each look.
// Shared by the stall unit tests and the cadence bench (tests/bench/stall_cadence_bench.cpp),
// so the bench measures the code the tests pin down.
#pragma once

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "spank/gputrace/core/stall.hpp"

namespace acme::test {

struct SimJob {
    // When the job stepped: a heartbeat touch and a log line, its GPUs busy in that second.
    // Between steps its GPUs idle (a checkpoint save, a data-loader wait, host work).
    std::vector<double> steps;
    // From here nothing moves and its GPUs spin (a hung collective), or idle (`hang_spins` false:
    // a data-loader deadlock).
    double hang = std::numeric_limits<double>::infinity();
    // Spans in which a checkpoint under --ckpt-dir grows every second.
    std::vector<std::pair<double, double>> ckpt_writes;
    double end = 0;  // the simulation stops here (or at the first verdict)
    bool hang_spins = true;
};

struct SimResult {
    std::optional<double> verdict_at;
    telemetry::Verdict verdict;
    double last_step = 0;  // the job's last step before the verdict (or the end)
};

inline std::vector<telemetry::Sample> sim_gpus(double util, long long watts, double mem) {
    telemetry::Sample s{0, 0, {}};
    s.reading.util_gpu = util;
    s.reading.util_mem = mem;
    s.reading.power_mw = watts * 1000;
    return {s};
}

inline SimResult simulate(const telemetry::StallConfig& c, const SimJob& job) {
    telemetry::NodeTracker node(c, "n1", 0);
    SimResult r;
    std::size_t next = 0;  // the first step not yet taken
    long long log = 0, ckpt = 0;
    double heartbeat = -1, next_look = c.probe;
    for (double t = 1; t <= job.end; t += 1) {
        bool stepped = false;
        while (next < job.steps.size() && job.steps[next] <= t && job.steps[next] < job.hang) {
            heartbeat = job.steps[next++];
            ++log;
            stepped = true;
        }
        if (stepped) node.on_samples(sim_gpus(95, 300, 40), t);
        else if (t >= job.hang && job.hang_spins) node.on_samples(sim_gpus(97, 80, 1), t);
        else node.on_samples(sim_gpus(0, 60, 0), t);
        for (const auto& [from, to] : job.ckpt_writes)
            if (t > from && t <= to && t < job.hang) ckpt += 1 << 20;
        if (t < next_look) continue;
        next_look = t + c.probe;
        telemetry::Probe p;
        p.log_size = log;
        if (heartbeat >= 0) p.heartbeat_mtime = heartbeat;
        if (!job.ckpt_writes.empty()) {
            p.ckpt_bytes = ckpt;
            p.ckpt_mtime = 0;
        }
        node.on_probe(p, t);
        if (heartbeat >= 0) r.last_step = heartbeat;
        auto v = telemetry::judge({node.state()}, {}, 0, t, c, false);
        if (v.stalled) {
            r.verdict_at = t;
            r.verdict = std::move(v);
            return r;
        }
    }
    return r;
}

// Steps every `every` s from `from` to `to`.
inline std::vector<double> regular_steps(double from, double to, double every) {
    std::vector<double> out;
    for (double t = from; t < to; t += every) out.push_back(t);
    return out;
}

}  // namespace acme::test
