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
    // What the job's processes do, as the sampler reads them at each look (job_activity.hpp).
    // Off: the sampler cannot read them (no stepd found, /proc hidden): the floor guards.
    bool processes_seen = false;
    struct Span {
        double from, to, rate;  // s, and bytes/s (io) or cores (cpu)
    };
    std::vector<Span> io{};      // read or written (a checkpoint save, a data-loader wait's reads)
    std::vector<Span> cpu{};     // host CPU (an upload, a recompilation, the trainer's loop)
    std::vector<std::pair<double, double>> disk_wait{};  // a process asleep on the disk (fsync on NFS)
    std::vector<std::pair<double, double>> gpu_busy{};   // GPUs busy with no step (an evaluation pass)
    double step_io = 0;  // bytes the data loader reads in each step's second (the next batch)
    // From the hang on, what a hung job still moves: a monitor's /proc reads (bytes/s) and a
    // host thread spin-waiting on the hung collective (cores).
    double hang_io = 0, hang_cpu = 0;
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
    double heartbeat = -1, next_look = c.probe, last_read = 0, due = 0;
    double io = 0, cpu = 0;  // since the processes were last read
    const auto in = [](double t, double from, double to) { return t > from && t <= to; };
    for (double t = 1; t <= job.end; t += 1) {
        bool stepped = false;
        while (next < job.steps.size() && job.steps[next] <= t && job.steps[next] < job.hang) {
            heartbeat = job.steps[next++];
            ++log;
            stepped = true;
        }
        if (stepped && t < job.hang) io += job.step_io;
        for (const auto& s : job.io) io += in(t, s.from, s.to) && t < job.hang ? s.rate : 0;
        for (const auto& s : job.cpu) cpu += in(t, s.from, s.to) && t < job.hang ? s.rate : 0;
        if (t >= job.hang) io += job.hang_io, cpu += job.hang_cpu;
        bool eval = false;
        for (const auto& [from, to] : job.gpu_busy) eval = eval || (in(t, from, to) && t < job.hang);
        if (stepped || eval) node.on_samples(sim_gpus(95, 300, 40), t);
        else if (t >= job.hang && job.hang_spins) node.on_samples(sim_gpus(97, 80, 1), t);
        else node.on_samples(sim_gpus(0, 60, 0), t);
        for (const auto& [from, to] : job.ckpt_writes)
            if (t > from && t <= to && t < job.hang) ckpt += 1 << 20;
        // The sampler looks every stall_probe, and when a window running would close (Verdict::due);
        // it reads the job's processes at each look, and at each sample where the pace asks for it.
        const bool look = t >= next_look || (due > 0 && t >= due);
        const auto read_processes = [&] {
            telemetry::Activity a{true, io, cpu, false};
            for (const auto& [from, to] : job.disk_wait) a.disk_wait = a.disk_wait || (t >= from && t <= to && t < job.hang);
            node.on_activity(a, t - last_read, t);
            io = cpu = 0;
            last_read = t;
        };
        if (!look) {
            if (job.processes_seen && node.fine_activity()) read_processes();
            continue;
        }
        next_look = t + c.probe;
        telemetry::Probe p;
        p.log_size = log;
        if (heartbeat >= 0) p.heartbeat_mtime = heartbeat;
        if (!job.ckpt_writes.empty()) {
            p.ckpt_bytes = ckpt;
            p.ckpt_mtime = 0;
        }
        node.on_probe(p, t);
        if (job.processes_seen) read_processes();
        io = cpu = 0;
        if (heartbeat >= 0) r.last_step = heartbeat;
        auto v = telemetry::judge({node.state()}, {}, 0, t, c, false);
        if (v.stalled) {
            r.verdict_at = t;
            r.verdict = std::move(v);
            return r;
        }
        due = v.due;
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
