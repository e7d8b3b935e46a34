// Stall verdicts at the job's own pace, on a simulated clock (tests/unit/stall_sim.hpp drives the
// sampler's NodeTracker, judge() and its look schedule as sampler_main.cpp and stall_watch.cpp do)
// at the SHIPPED settings: a GPU sample every 10 s (gputrace interval), a full look every 30 s
// (stall_probe), quick looks at the heartbeat every 0.5 s (stall_heartbeat_probe), and the job's
// known processes read at a share of the quiet it has shown. Jobs step every 2 s, 10 s and 60 s
// (+-10 % jitter), touching their heartbeat at each step; between two steps nothing of theirs shows
// (the hard case: GPU work the samples miss), except the data loader reading the next batch (1-50
// MB) at each step. Every job has a tail of its own: one step in 50 waits 3-10 steps for its data
// loader (reading 0.1-10 MB/s), and a share of its steps drawn per job (0-3 %) straggle, taking 2-4
// times as long. Healthy jobs also pause every 5-15 minutes for a 30-150 s checkpoint save (writing
// 1-500 MB/s, ending in a 0-20 s fsync asleep on the disk), every 10-30 minutes for a 60-300 s
// evaluation pass (GPUs busy, no step), and one job in three once for 30-120 s of host-only work
// (an upload through sockets, a recompilation: a core busy, no I/O).
//
// What a straggler shows, and where (one slow rank holds every rank at the step's collective):
//  - a slow data loader on the slow rank: it is blocked in next(dataloader) while its workers
//    read and decode (Meta's SPDL guide, "The Straggler": the others wait in nccl:all_reduce, the
//    straggler's trace is blocked on the data loader): reads (1-10 MB/s) and a core on its node;
//  - a slow GPU (thermal or degraded: NVIDIA/nccl#893, "one GPU slower than the others ... thermal
//    issues?"): the slow rank's GPU computes (SMs, power, memory traffic: a busy sample) while the
//    others wait in the collective at 100 % utilisation and idle power (NVIDIA/nccl#968, cupy#3557);
//  - a host-side pause on the slow rank (Python's garbage collector, a page-cache miss storm): a
//    core busy on its node (its host thread is not spin-waiting on a spinning GPU);
//  - the blind spot, counted apart: a slow collective itself (a congested or degraded link): every
//    rank waits inside it, every GPU reads as a hung collective does (utilisation 100 %, idle
//    power, no memory traffic: NVIDIA/nccl#968), the bytes go by RDMA (no /proc/PID/io count) and
//    the proxy thread's CPU is the same as in a hang. Nothing of the GPUs or the processes (NVML
//    utilisation, power, memory utilisation; /proc/PID/io, stat) tells it from a hang; the node's
//    network ports do (struct Nic below: bytes keep moving, or stop for a retransmission timeout
//    on a lossy link), where the job's steps show there. Counted apart, as healthy jobs called
//    (false verdicts by another name), on a congested and on a lossy link.
// The first three draw one of them per straggling step; a job of the blind-spot row straggles
// only that way. Prints, per configuration, every configuration judging the same jobs (the seed
// drawn at random unless given, and printed):
//  - hang to verdict, p95, in the job's steps, from the moment it hung (and from its last step),
//    for hangs once the pace is learned, of the kinds the paper describes: a NCCL hang (GPUs
//    spin, a host thread spin-waits on them, no I/O) and a deadlock (GPUs idle, the processes
//    asleep); both still trickle 0-4 KiB/s of reads (a monitoring thread). The hung jobs lived
//    the healthy jobs' lives (tails, saves, evaluations) up to the hang. Target: within 3 steps.
//  - false verdicts over healthy jobs (target 0), and apart those over jobs whose stragglers are
//    slow collectives (the blind spot above).
//  - hang to verdict for jobs hung before a pace is learned (the default windows).
// Configurations: before the ports (stall_cadence_nic=off: the longest quiet the job has shown and
// stall_cadence_margin more, margin 2: three times the quiet) and the shipped keys (the ports read:
// where every node's ports carried the job's steps and are still over the quiet, the quiet and
// stall_cadence_nic_margin more, at least stall_cadence_nic_floor; else as before), that floor at
// 10 s and 0 beside them; no quick looks (stall_heartbeat_probe=0: every look at stall_probe, as before them); margin
// 0.25 with and without quick looks (a tighter margin: sooner verdicts, more slow collectives
// called); margin 0 (what the margin guards); the processes not seen (k x the step and the floor), floor 0
// there (what the floor guards); the fixed windows (k 0) as the baseline.
// Usage: stall-cadence-bench [JOBS] [SEED]; STALL_BENCH_DEBUG=1 prints each false verdict and each
// hang called later than 3 steps, with its evidence, to stderr; STALL_BENCH_ONLY=TEXT runs only the
// rows whose name holds TEXT (the same jobs: each row draws them from the seed); STALL_BENCH_BREAKDOWN=1
// prints to stderr, per row and step, where the slowest tenth of the hangs' time to the verdict went
// (struct Parts).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

// A healthy job's life: the warm-up, 25 (jittered, waited) steps, and an hour.
double lifetime(double step) { return kWarmup + 25 * step * 1.5 + 3600; }

// A job's step-time tail: the share of its steps that straggle, and whether its stragglers are
// slow collectives (the blind spot) rather than a slow rank that shows on its node.
struct Tails {
    double straggle = 0;
    bool blind = false;
    bool lossy = false;  // the blind spot's link drops packets: its collective stalls outright at times
};

// The node's network ports (nic_traffic.hpp). A multi-node job's collectives cross them: each
// step's gradient all-reduce moves 0.1-10 GB/s over the last 20-60 % of the step before its
// heartbeat (the share drawn per job: the backward pass it overlaps, as DDP buckets it; the
// burstiest case: FSDP's gathers and pipeline or tensor parallelism move bytes through more of
// the step), and nothing else of the step shows there; a job whose steps never show there (`visible` false: a one-node job on
// NVLink, a fabric whose RDMA the counters miss) teaches no trust. Management traffic (the subnet
// manager's MADs, NCCL's RAS and the TCPStore keep-alives) trickles 0-64 KiB/s all along, the hang
// included. A straggler elsewhere (a slow data loader, GPU or host pause on the slow rank) holds
// every rank in the collective: no bytes move here until it joins (NCCL sends into buffers the
// receiver has posted). A collective slowed by a congested link (the blind spot) moves bytes at
// 1-30 % of the rate all along (a lossless fabric's credits and pauses last micro- to milliseconds,
// far below a read); on a lossy link (a degraded cable, RoCE without PFC) a dropped packet stalls
// its queue pair for a retransmission timeout (4.096 us x 2^20 = 4.3 s at NCCL's default
// NCCL_IB_TIMEOUT; NCCL docs, env NCCL_IB_TIMEOUT) with nothing moving, one in four lost again (8.6 s).
struct Nic {
    bool visible = true;
    double frac = 0.4, rate = 1e9, trickle = 0;
};
constexpr double kRetransmit = 4.096e-6 * (1 << 20);

// Trains from `from` to `to` at `step`: the step times into `job`, a data-loader wait of 3-10
// steps in one step of 50 (its reads an io span), stragglers of 2-4 steps. Returns when the last
// step (or wait) ended.
double train(test::SimJob& job, double step, double from, double to, const Tails& tails, const Nic& nic, Rng& rng) {
    double t = from;
    // At least the step that ends a pause (training resumes a step after it): a pause due at once
    // after another starts after that step, not in a step's time of nothing.
    do {
        job.steps.push_back(t);
        // The all-reduce that ends the step: at the end of its backward pass, before the heartbeat.
        if (nic.visible) job.nic.push_back({t - nic.frac * step, t, nic.rate});
        const double u = uniform(rng, 0, 1);
        if (u < 0.02) {
            const double wait = step * uniform(rng, 3, 10);
            job.io.push_back({t + 1, t + wait, uniform(rng, 1e5, 1e7)});
            t += wait;
        } else if (u < 0.02 + tails.straggle) {
            // The step's own second as usual, then the straggle until the slow rank catches up.
            const double slow = step * uniform(rng, 2, 4);
            const double kind = uniform(rng, 0, 3);
            if (tails.blind) {
                job.gpu_spin.emplace_back(t + 1, t + slow);
                const double rate = nic.rate * uniform(rng, 0.01, 0.3);
                if (!nic.visible) {
                } else if (!tails.lossy) {
                    job.nic.push_back({t + 1, t + slow, rate});
                } else {
                    for (double at = t + 1; at < t + slow;) {
                        const double flow = uniform(rng, 0.2, 2);
                        job.nic.push_back({at, std::min(at + flow, t + slow), rate});
                        at += flow + kRetransmit * (uniform(rng, 0, 1) < 0.25 ? 2 : 1);
                    }
                }
            } else if (kind < 1) {  // a slow data loader: reads and a core
                job.io.push_back({t + 1, t + slow, uniform(rng, 1e6, 1e7)});
                job.cpu.push_back({t + 1, t + slow, 1});
            } else if (kind < 2) {  // a slow GPU computing
                job.gpu_busy.emplace_back(t + 1, t + slow);
            } else {  // a host-side pause
                job.cpu.push_back({t + 1, t + slow, 1});
            }
            t += slow;
        } else {
            t += step * uniform(rng, 0.9, 1.1);
        }
    } while (t < to);
    return t;
}

// A healthy job's life from 1 s to `to`: training with its checkpoint saves, evaluation passes
// and (`host`) one host-only pause.
void live(test::SimJob& job, double step, double to, const Tails& tails, const Nic& nic, bool host, Rng& rng) {
    job.nic.push_back({0, to + 7200, nic.trickle});
    job.hang_nic = nic.trickle;
    double next_save = uniform(rng, 300, 900), next_eval = uniform(rng, 600, 1800);
    double next_host = host ? uniform(rng, 600, 1800) : 1e18;
    double t = 1;
    while (t < to) {
        const double until = std::min({next_save, next_eval, next_host, to});
        // A pause starts when a step ends; training resumes a step after it ends.
        t = train(job, step, t, until, tails, nic, rng);
        if (t >= to) break;
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
}

constexpr double kInterval = 10;  // the shipped gputrace interval (s between GPU samples)

// `ports`: the sampler reads the node's network ports (the node has RDMA port counters).
test::SimJob base(bool seen, bool ports, Rng& rng) {
    test::SimJob job;
    job.processes_seen = seen;
    job.nic_present = ports;
    job.gpu_interval = kInterval;
    job.step_io = uniform(rng, 1e6, 5e7);
    return job;
}

Nic draw_nic(bool visible, Rng& rng) {
    Nic n;
    n.visible = visible;
    n.frac = uniform(rng, 0.2, 0.6);
    n.rate = std::exp(uniform(rng, std::log(1e8), std::log(1e10)));
    n.trickle = uniform(rng, 0, 65536);
    return n;
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

// STALL_BENCH_BREAKDOWN=1: where a hang's time to its verdict goes. Hang to verdict = (the stamp the
// window counted from - the job's last real motion) + the window + (the verdict - the window's close)
// - (the hang - the last motion); the stamp is the newest of its progress (heartbeat, log), its
// processes' activity and (the ports' window) its ports, each stamped when a read saw it.
struct Parts {
    double total, stamp, window, look, before, learned, reads;
    char by;      // the stamp counted from: h(eartbeat/log), p(rocesses), n(ports)
    char window_kind;  // n: the ports' window, m: the margin's, f: the fixed one
    bool floored;      // the ports' window is its floor (stall_cadence_nic_floor)
};

// When anything of the job last moved before its hang (what a perfect reader would count from).
double last_motion(const test::SimJob& job, const StallConfig& c) {
    const double h = job.hang;
    double at = 0;
    for (const double s : job.steps)
        if (s < h) at = std::max(at, s);
    const auto spans = [&](const std::vector<test::SimJob::Span>& v, double least) {
        for (const auto& s : v)
            if (s.from < h && s.rate >= least) at = std::max(at, std::min(s.to, h));
    };
    spans(job.io, c.cadence.io);
    spans(job.cpu, c.cadence.cpu);
    spans(job.nic, c.cadence.nic_bytes);
    for (const auto* v : {&job.gpu_busy, &job.disk_wait, &job.gpu_spin})
        for (const auto& [from, to] : *v)
            if (from < h) at = std::max(at, std::min(to, h));
    return at;
}

Parts parts(const StallConfig& c, const test::SimJob& job, const test::SimResult& r) {
    const auto& s = r.state;
    const double moved = last_motion(job, c);
    const double progress = std::max({s.active_at, s.log_changed_at, s.ckpt_changed_at});
    const bool ports = r.verdict.evidence.find("network ports still") != std::string::npos;
    const bool paced = !ports && r.verdict.evidence.find("% more, its processes idle") != std::string::npos;
    const double fixed = s.pattern == telemetry::Pattern::spin ? c.spin_window : c.idle_window;
    double from = progress, window = fixed;
    char by = 'h';
    if (paced || ports) {
        if (s.activity_at > from) from = s.activity_at, by = 'p';
        window = s.step * (1 + c.cadence.margin);
    }
    bool floored = false;
    if (ports) {
        if (s.nic_at > from) from = s.nic_at, by = 'n';
        window = std::min(std::max(s.step * (1 + c.cadence.nic_margin), c.cadence.nic_floor), fixed);
        floored = s.step * (1 + c.cadence.nic_margin) < c.cadence.nic_floor;
    }
    return {*r.verdict_at - job.hang, from - moved, window, *r.verdict_at - (from + window), job.hang - moved, s.step, r.read_interval, by,
            ports ? 'n' : paced ? 'm' : 'f', floored};
}

void print_parts(double step, bool spins, std::vector<Parts> v) {
    if (v.empty()) return;
    std::sort(v.begin(), v.end(), [](const Parts& a, const Parts& b) { return a.total < b.total; });
    // The slowest tenth: what the p95 is made of.
    const std::size_t from = v.size() - std::max<std::size_t>(1, v.size() / 10);
    double stamp = 0, window = 0, look = 0, before = 0, learned = 0, reads = 0;
    int by[3] = {}, kind[3] = {}, floored = 0;
    const double n = static_cast<double>(v.size() - from);
    for (std::size_t i = from; i < v.size(); ++i) {
        const auto& p = v[i];
        stamp += p.stamp / n, window += p.window / n, look += p.look / n, before += p.before / n, learned += p.learned / n;
        reads += p.reads / n;
        ++by[p.by == 'h' ? 0 : p.by == 'p' ? 1 : 2];
        ++kind[p.window_kind == 'n' ? 0 : p.window_kind == 'm' ? 1 : 2];
        floored += p.floored;
    }
    double all_stamp = 0, all_look = 0;
    for (const auto& p : v) all_stamp += p.stamp / static_cast<double>(v.size()), all_look += p.look / static_cast<double>(v.size());
    std::fprintf(stderr,
                 "  breakdown %s %g s steps, the slowest %zu of %zu (%.1f-%.1f s): stamp late %.2f s (from heartbeat %d, "
                 "processes %d, ports %d), window %.2f s (ports %d, margin %d, fixed %d; at the ports' floor %d; quiet learned "
                 "%.2f s, read every %.2f s), look after the close %.2f s, hang after the last motion -%.2f s; all hangs: stamp %.2f s, look %.2f s\n",
                 spins ? "spin" : "idle", step, v.size() - from, v.size(), v[from].total, v.back().total, stamp, by[0], by[1],
                 by[2], window, kind[0], kind[1], kind[2], floored, learned, reads, look, before, all_stamp, all_look);
}

Hangs hangs(const StallConfig& c, double step, bool spins, bool learned, bool seen, bool ports, int jobs, Rng& rng) {
    std::vector<double> after_hang, after_step;
    const bool breakdown = std::getenv("STALL_BENCH_BREAKDOWN") && learned;
    std::vector<Parts> split;
    Hangs h;
    for (int j = 0; j < jobs; ++j) {
        auto job = base(seen, ports, rng);
        const Tails tails{uniform(rng, 0, 0.03), false};
        const Nic nic = draw_nic(true, rng);
        // Its life long enough for 25 steps after the warm-up whatever it paused for; it hangs in
        // the 20 minutes after its 25th (the pace learned), or within 10 steps of the warm-up.
        live(job, step, kWarmup + 100 * step + 3600, tails, nic, j % 3 == 0, rng);
        const auto learning = std::lower_bound(job.steps.begin(), job.steps.end(), kWarmup);
        const double learned_at = job.steps.end() - learning > 25 ? learning[25] : job.steps.back();
        job.hang = learned ? uniform(rng, learned_at, learned_at + 1200) : uniform(rng, kWarmup + step, kWarmup + 10 * step);
        job.end = job.hang + 3600;
        job.hang_spins = spins;
        job.hang_io = uniform(rng, 0, 4096);
        job.hang_cpu = spins ? 1 : uniform(rng, 0, 0.05);
        const auto r = test::simulate(c, job);
        if (!r.verdict_at) {
            ++h.missed;
            continue;
        }
        if (std::getenv("STALL_BENCH_DEBUG") && *r.verdict_at - job.hang > 3 * step)
            std::fprintf(stderr, "late: step %g hang %.1f verdict %.1f last step %.1f: %s\n", step, job.hang, *r.verdict_at,
                         r.last_step, r.verdict.evidence.c_str());
        after_hang.push_back(*r.verdict_at - job.hang);
        after_step.push_back(*r.verdict_at - r.last_step);
        if (breakdown) split.push_back(parts(c, job, r));
    }
    if (breakdown) print_parts(step, spins, split);
    h.from_hang = p95(after_hang);
    h.from_step = p95(after_step);
    return h;
}

// Healthy jobs; one in four's steps never show on the ports (the trust the ports need, tested).
int false_verdicts(const StallConfig& c, double step, bool seen, bool ports, bool blind, bool lossy, int jobs, Rng& rng) {
    int bad = 0;
    for (int j = 0; j < jobs; ++j) {
        auto job = base(seen, ports, rng);
        const Tails tails{uniform(rng, 0, 0.03), blind, lossy};
        const Nic nic = draw_nic(j % 4 != 3, rng);
        job.end = lifetime(step);
        live(job, step, job.end, tails, nic, j % 3 == 0, rng);
        const auto r = test::simulate(c, job);
        if (r.verdict_at) {
            ++bad;
            if (std::getenv("STALL_BENCH_DEBUG"))
                std::fprintf(stderr, "false verdict: step %g blind %d at %.1f last step %.1f: %s\n", step, blind, *r.verdict_at,
                             r.last_step, r.verdict.evidence.c_str());
        }
    }
    return bad;
}

// One configuration over the jobs `seed` draws: the same jobs for every configuration.
void row(const char* name, const StallConfig& c, bool seen, bool ports, int jobs, unsigned long long seed) {
    if (const char* only = std::getenv("STALL_BENCH_ONLY"); only && !std::strstr(name, only)) return;
    Rng rng(seed);
    if (std::getenv("STALL_BENCH_BREAKDOWN")) std::fprintf(stderr, "%s:\n", name);
    std::string line;
    int missed = 0;
    for (const bool spins : {true, false}) {
        line += spins ? "NCCL hang (GPUs spin)" : "; deadlock (GPUs idle)";
        for (const double step : {2.0, 10.0, 60.0}) {
            const auto h = hangs(c, step, spins, true, seen, ports, jobs, rng);
            missed += h.missed;
            char buf[160];
            std::snprintf(buf, sizeof buf, "%s %g s steps %.1f (%.1f)", step == 2 ? "" : ",", step, h.from_hang / step,
                          h.from_step / step);
            line += buf;
        }
    }
    int bad = 0, bad_blind = 0, bad_lossy = 0;
    for (const double step : {2.0, 10.0, 60.0}) bad += false_verdicts(c, step, seen, ports, false, false, jobs, rng);
    for (const double step : {2.0, 10.0, 60.0}) bad_blind += false_verdicts(c, step, seen, ports, true, false, jobs, rng);
    for (const double step : {2.0, 10.0, 60.0}) bad_lossy += false_verdicts(c, step, seen, ports, true, true, jobs, rng);
    std::printf("stall cadence, %s: hang to verdict p95 in steps from the hang (from the last step): %s%s; "
                "false verdicts %d over %d healthy jobs (target 0); slow collectives (healthy, called as hangs): "
                "congested link %d of %d, lossy link %d of %d\n",
                name, line.c_str(), missed ? (" (" + std::to_string(missed) + " hangs never called)").c_str() : "",
                bad, 3 * jobs, bad_blind, 3 * jobs, bad_lossy, 3 * jobs);
}

}  // namespace

int main(int argc, char** argv) {
    const int jobs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 200;
    const unsigned long long seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : std::random_device{}();
    std::printf("stall cadence bench: simulated clock, shipped settings (GPU samples every %g s, stall_probe %g s, "
                "stall_heartbeat_probe %g s), %d jobs per figure, seed %llu\n",
                kInterval, StallConfig{}.probe, StallConfig{}.heartbeat_probe, jobs, seed);
    const StallConfig c;
    auto ports_off = c;
    ports_off.cadence.nic = false;
    row("before the ports (stall_cadence_nic=off: margin 2, 3x the quiet), processes seen", ports_off, true, false, jobs, seed);
    row("shipped keys (ports read: 1.25x the quiet, at least 5 s, where every port is still), processes seen", c, true, true,
        jobs, seed);
    auto floor10 = c;
    floor10.cadence.nic_floor = 10;
    row("ports read, stall_cadence_nic_floor=10 (two retransmission timeouts)", floor10, true, true, jobs, seed);
    auto floor0 = c;
    floor0.cadence.nic_floor = 0;
    row("ports read, stall_cadence_nic_floor=0", floor0, true, true, jobs, seed);
    auto no_quick = ports_off;
    no_quick.heartbeat_probe = 0;
    row("no quick looks (stall_heartbeat_probe=0: 3x the quiet at stall_probe looks alone), processes seen", no_quick, true,
        false, jobs, seed);
    auto quarter = ports_off;
    quarter.cadence.margin = 0.25;
    row("margin 0.25, quick looks (faster, calls more stragglers in the collective)", quarter, true, false, jobs, seed);
    auto quarter_slow = no_quick;
    quarter_slow.cadence.margin = 0.25;
    row("margin 0.25, no quick looks", quarter_slow, true, false, jobs, seed);
    auto margin0 = ports_off;
    margin0.cadence.margin = 0;
    row("margin 0, processes seen (what the margin guards)", margin0, true, false, jobs, seed);
    row("shipped keys, processes not seen (the 600 s floor)", c, false, true, jobs, seed);
    auto floor0p = ports_off;
    floor0p.cadence.floor = 0;
    row("floor 0, processes not seen (what the floor guards)", floor0p, false, false, jobs, seed);
    auto fixed = c;
    fixed.cadence.k = 0;
    row("fixed windows (k 0, the baseline)", fixed, true, false, jobs, seed);
    Rng rng(seed);
    const auto early = hangs(c, 2, true, false, true, true, jobs, rng), early_idle = hangs(c, 2, false, false, true, true, jobs, rng);
    std::printf("stall cadence, no cadence (hung within 10 steps of the warm-up's end): p95 %.0f s spinning, %.0f s idle "
                "from the hang (the default windows: %.0f s, %.0f s)\n",
                early.from_hang, early_idle.from_hang, c.spin_window, c.idle_window);
    return 0;
}
