// A job on a simulated clock, judged as the sampler judges it (sampler_main.cpp, stall_watch.cpp):
// a tick every 0.25 s (the sampler's event wait), a GPU sample every `gpu_interval` seconds and
// one more when a window at the job's pace closes (StallWatch::wants_gpus), quick looks at the
// heartbeat every stall_heartbeat_probe and at the job's processes at NodeTracker::process_interval
// once the warm-up is over, a full look (log, heartbeat, checkpoints, a walk of the processes) every
// stall_probe and when a window closes (closes_at), the verdict at each full look.
// Shared by the stall unit tests and the cadence bench (tests/bench/stall_cadence_bench.cpp),
// so the bench measures the code the tests pin down.
#pragma once

#include <algorithm>
#include <limits>
#include <optional>
#include <type_traits>
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
    // GPUs busy with no step: an evaluation pass, or a straggler's slow GPU computing its step
    // (high SM use and power, memory traffic) while the others wait for it in the collective.
    std::vector<std::pair<double, double>> gpu_busy{};
    // GPUs spinning with no step: every rank inside a collective that moves slowly (a congested
    // or degraded link), the readings a hung collective gives.
    std::vector<std::pair<double, double>> gpu_spin{};
    double step_io = 0;  // bytes the data loader reads in each step's second (the next batch)
    // From the hang on, what a hung job still moves: a monitor's /proc reads (bytes/s) and a
    // host thread spin-waiting on the hung collective (cores).
    double hang_io = 0, hang_cpu = 0;
    double gpu_interval = 1;  // s between the sampler's GPU samples (gputrace interval=)
    // The node's network ports (nic_traffic.hpp), read with the processes: off, no RDMA port
    // counters on the node. `nic`: bytes/s on them (a step's collective, a slow collective's
    // trickle), `hang_nic`: what still moves after the hang (management traffic, keep-alives).
    bool nic_present = false;
    std::vector<Span> nic{};
    double hang_nic = 0;
};

struct SimResult {
    std::optional<double> verdict_at;
    telemetry::Verdict verdict;
    double last_step = 0;  // the job's last step before the verdict (or the end)
    telemetry::NodeState state;  // the node's state the verdict was judged on (the bench's breakdown)
    double read_interval = 0;    // NodeTracker::process_interval then
};

inline std::vector<telemetry::Sample> sim_gpus(double util, long long watts, double mem) {
    telemetry::Sample s{0, 0, {}};
    s.reading.util_gpu = util;
    s.reading.util_mem = mem;
    s.reading.power_mw = watts * 1000;
    return {s};
}

inline SimResult simulate(const telemetry::StallConfig& c, const SimJob& job) {
    constexpr double dt = 0.25;  // the sampler's longest wait between two ticks
    telemetry::NodeTracker node(c, "n1", 0);
    SimResult r;
    std::size_t next = 0;  // the first step not yet taken
    long long log = 0, ckpt = 0;
    double heartbeat = -1, last_stepped = -1e9;
    double next_sample = job.gpu_interval, last_sample = 0, next_look = c.probe, next_beat = 0, next_read = 0;
    double last_read = 0;
    double io = 0, cpu = 0, nic = 0;  // since the processes (and the ports) were last read
    telemetry::Verdict judged;
    // The spans in effect at t (from < t <= to), walked in time order: long lives stay cheap.
    struct Spans {
        std::vector<SimJob::Span> all, live{};
        std::size_t next = 0;
        double at(double t) {
            while (next < all.size() && all[next].from < t) live.push_back(all[next++]);
            live.erase(std::remove_if(live.begin(), live.end(), [&](const SimJob::Span& s) { return s.to < t; }), live.end());
            double sum = 0;
            for (const auto& s : live) sum += s.rate;
            return sum;
        }
    };
    const auto spans = [](const auto& v) {
        Spans out;
        for (const auto& x : v) {
            if constexpr (std::is_same_v<std::decay_t<decltype(x)>, SimJob::Span>) out.all.push_back(x);
            else out.all.push_back({x.first, x.second, 1});
        }
        std::sort(out.all.begin(), out.all.end(), [](const auto& a, const auto& b) { return a.from < b.from; });
        return out;
    };
    auto io_spans = spans(job.io), cpu_spans = spans(job.cpu), nic_spans = spans(job.nic), busy_spans = spans(job.gpu_busy),
         spin_spans = spans(job.gpu_spin), disk_spans = spans(job.disk_wait);
    bool gpu_busy = false, gpu_spin = false, disk_wait = false;  // at the current tick
    const auto sample = [&](double t) {
        if (t < job.hang && (t - last_stepped < 1 || gpu_busy)) node.on_samples(sim_gpus(95, 300, 40), t);
        else if ((t >= job.hang && job.hang_spins) || (t < job.hang && gpu_spin)) node.on_samples(sim_gpus(97, 80, 1), t);
        else node.on_samples(sim_gpus(0, 60, 0), t);
        last_sample = t;
    };
    const auto read_processes = [&](double t) {
        telemetry::Activity a{true, io, cpu, false};
        a.disk_wait = disk_wait;
        node.on_activity(a, last_read > 0 ? t - last_read : 0, t);
        if (job.nic_present) node.on_nic({last_read > 0, nic, 0}, true, last_read > 0 ? t - last_read : 0, t);
        io = cpu = nic = 0;
        last_read = t;
        next_read = t + node.process_interval(t);
    };
    for (double t = dt; t <= job.end; t += dt) {
        bool stepped = false;
        while (next < job.steps.size() && job.steps[next] <= t && job.steps[next] < job.hang) {
            heartbeat = last_stepped = job.steps[next++];
            ++log;
            stepped = true;
        }
        if (stepped) io += job.step_io;
        const bool live = t < job.hang;
        io += live ? io_spans.at(t) * dt : job.hang_io * dt;
        cpu += live ? cpu_spans.at(t) * dt : job.hang_cpu * dt;
        nic += live ? nic_spans.at(t) * dt : job.hang_nic * dt;
        gpu_busy = live && busy_spans.at(t) > 0;
        gpu_spin = live && spin_spans.at(t) > 0;
        disk_wait = live && disk_spans.at(t) > 0;
        for (const auto& [from, to] : job.ckpt_writes)
            if (t > from && t <= to && live) ckpt += static_cast<long long>((1 << 20) * dt);
        if (t >= next_sample) {
            sample(t);
            next_sample += job.gpu_interval;
        }
        // StallWatch::wants_gpus: a window closing between two samples is judged on the GPUs now.
        const bool quick = c.heartbeat_probe > 0 && t >= c.warmup;
        const double closing = telemetry::closes_at(judged, node.state());
        if ((quick && job.processes_seen && t - last_sample >= node.sample_interval(t)) ||
            (closing > 0 && t >= closing && last_sample < closing))
            sample(t);
        // StallWatch::tick: the quick looks, then a full look when due.
        if (quick && t >= next_beat) {
            node.on_heartbeat(heartbeat >= 0 ? std::optional<double>(heartbeat) : std::nullopt, t);
            next_beat = t + c.heartbeat_probe;
        }
        if (quick && job.processes_seen && t >= next_read) read_processes(t);
        const double at = telemetry::closes_at(judged, node.state());
        if (t < next_look && !(at > 0 && t >= at)) continue;
        next_look = t + c.probe;
        telemetry::Probe p;
        p.log_size = log;
        if (heartbeat >= 0) p.heartbeat_mtime = heartbeat;
        if (!job.ckpt_writes.empty()) {
            p.ckpt_bytes = ckpt;
            p.ckpt_mtime = 0;
        }
        node.on_probe(p, t);
        if (job.processes_seen) read_processes(t);
        io = cpu = nic = 0;
        node.close_work_window();
        if (heartbeat >= 0) r.last_step = heartbeat;
        auto v = telemetry::judge({node.state()}, {}, 0, t, c, false);
        if (v.stalled) {
            r.verdict_at = t;
            r.verdict = std::move(v);
            r.state = node.state();
            r.read_interval = node.process_interval(t);
            return r;
        }
        judged = std::move(v);
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
