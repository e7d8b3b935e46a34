// The node's network ports (nic_traffic.hpp) and what they change in a verdict (stall.cpp, judge):
// where every node's ports carried the job's steps and none moved over the quiet, the job's longest
// quiet and stall_cadence_nic_margin more (at least stall_cadence_nic_floor) is the hang; a
// collective that moves bytes slowly is not called by it; a node whose ports tell nothing is judged
// as before.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "spank/gputrace/core/nic_traffic.hpp"
#include "spank/gputrace/core/stall.hpp"
#include "tests/unit/stall_sim.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme::telemetry;
using acme::test::regular_steps;
using acme::test::SimJob;
using acme::test::simulate;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

namespace fs = std::filesystem;

void put(const fs::path& file, unsigned long long v) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << v << "\n";
}

// A sysfs-like tree: /class/infiniband/mlx5_0 a link to /devices/mlx5_0, as the kernel makes it.
struct FakeSys {
    acme::test::TempDir dir;
    fs::path dev() const { return dir.path() / "devices" / "mlx5_0"; }
    fs::path port() const { return dev() / "ports" / "1"; }
    void ib(unsigned long long xmit, unsigned long long rcv, unsigned long long wait = 0) {
        put(port() / "counters" / "port_xmit_data", xmit);
        put(port() / "counters" / "port_rcv_data", rcv);
        put(port() / "counters" / "port_xmit_wait", wait);
        link("infiniband", "mlx5_0", dev());
    }
    void net(const std::string& name, unsigned long long rx, unsigned long long tx) {
        const auto d = dir.path() / "devices" / "net" / name;
        put(d / "statistics" / "rx_bytes", rx);
        put(d / "statistics" / "tx_bytes", tx);
        link("net", name, d);
    }
    void link(const std::string& cls, const std::string& name, const fs::path& to) {
        const auto l = dir.path() / "class" / cls / name;
        fs::create_directories(l.parent_path());
        if (!fs::is_symlink(l)) fs::create_directory_symlink(to, l);
    }
    std::string root() const { return dir.path().string(); }
};

// A job stepping every `step` s whose all-reduce crosses the ports (1 GB/s for 40 % of each
// step), a management trickle (8 KiB/s) all along, its processes and ports read, shipped samples.
SimJob ported(double step, double to) {
    SimJob job;
    job.steps = regular_steps(1, to, step);
    job.processes_seen = true;
    job.step_io = 4e6;
    job.gpu_interval = 10;
    job.nic_present = true;
    for (const double t : job.steps) job.nic.push_back({t, t + 0.4 * step, 1e9});
    job.nic.push_back({0, 1e9, 8192});
    job.hang_nic = 8192;
    return job;
}

// One step of `job` held from `from` to `to` (a slow collective): no step, no step traffic between,
// every GPU spinning as in a hung collective; the next step at `to`.
void hold(SimJob& job, double from, double to) {
    const auto inside = [&](double t) { return t > from && t < to; };
    job.steps.erase(std::remove_if(job.steps.begin(), job.steps.end(), inside), job.steps.end());
    job.nic.erase(std::remove_if(job.nic.begin(), job.nic.end(), [&](const SimJob::Span& n) { return inside(n.from); }),
                  job.nic.end());
    job.steps.push_back(to);
    std::sort(job.steps.begin(), job.steps.end());
    job.gpu_spin.emplace_back(from + 1, to);
}

StallConfig ports_off() {
    StallConfig c;
    c.cadence.nic = false;
    return c;
}

}  // namespace

TEST_CASE("a sysfs counter: digits and a newline; anything else is none") {
    CHECK(parse_counter("123\n") == 123ULL);
    CHECK(parse_counter("0") == 0ULL);
    CHECK(parse_counter("18446744073709551615\n") == 18446744073709551615ULL);
    for (const char* bad : {"", "\n", "-1\n", "12 3\n", "0x10\n", "18446744073709551616\n", "1e3\n", "12\n\n"})
        CHECK_FALSE(parse_counter(bad));
}

TEST_CASE("the ports: bytes in 4-octet units plus the netdevs' but lo's, since the last read; port_xmit_wait apart") {
    FakeSys sys;
    sys.ib(1000, 500);
    sys.net("ib0", 10, 20);
    sys.net("lo", 0, 0);
    NicTraffic nic(sys.root());
    REQUIRE(nic.present());
    sys.ib(1100, 550, 7);
    sys.net("ib0", 1010, 20);
    sys.net("lo", 1 << 30, 1 << 30);  // loopback is never the job's fabric
    const auto d = nic.read();
    CHECK(d.seen);
    CHECK(d.bytes == 4 * 150 + 1000);
    CHECK(d.xmit_wait == 7);
    const auto still = nic.read();
    CHECK(still.seen);
    CHECK(still.bytes == 0);
    CHECK(still.xmit_wait == 0);
}

TEST_CASE("no /sys/class/infiniband, or none of its ports with counters: no evidence, whatever the netdevs do") {
    FakeSys sys;
    sys.net("eth0", 10, 20);
    NicTraffic none(sys.root());
    CHECK_FALSE(none.present());
    CHECK_FALSE(none.read().seen);
    fs::create_directories(sys.port());  // a port without counters or hw_counters
    sys.link("infiniband", "mlx5_0", sys.dev());
    NicTraffic bare(sys.root());
    CHECK_FALSE(bare.present());
    CHECK_FALSE(bare.read().seen);
}

TEST_CASE("a port without PMA counters (EFA): its hw_counters' *_bytes") {
    FakeSys sys;
    put(sys.port() / "hw_counters" / "tx_bytes", 100);
    put(sys.port() / "hw_counters" / "rx_bytes", 100);
    put(sys.port() / "hw_counters" / "rdma_read_bytes", 100);
    put(sys.port() / "hw_counters" / "tx_pkts", 100);  // not bytes: not read
    sys.link("infiniband", "mlx5_0", sys.dev());
    NicTraffic nic(sys.root());
    REQUIRE(nic.present());
    put(sys.port() / "hw_counters" / "tx_bytes", 150);
    put(sys.port() / "hw_counters" / "rdma_read_bytes", 160);
    put(sys.port() / "hw_counters" / "tx_pkts", 1000000);
    const auto d = nic.read();
    CHECK(d.seen);
    CHECK(d.bytes == 110);
}

TEST_CASE("unknown is never still: a saturated 32-bit counter, one gone back, a port come or gone, a bad file") {
    FakeSys sys;
    sys.ib(1000, 500);
    NicTraffic nic(sys.root());
    REQUIRE(nic.present());
    sys.ib(0xffffffffULL, 500);  // PortCounters saturate: it no longer counts
    CHECK_FALSE(nic.read().seen);
    sys.ib(2000, 500);
    CHECK_FALSE(nic.read().seen);  // no baseline from the read before
    CHECK(nic.read().seen);
    sys.ib(10, 500);  // went back (the device reset)
    CHECK_FALSE(nic.read().seen);
    CHECK(nic.read().seen);
    sys.net("eth1", 0, 0);  // a netdev came
    CHECK_FALSE(nic.read().seen);
    CHECK(nic.read().seen);
    std::ofstream(sys.port() / "counters" / "port_rcv_data") << "garbage\n";
    CHECK_FALSE(nic.read().seen);
}

TEST_CASE("below the class directory's own links nothing is followed: a counters link is no port") {
    FakeSys sys;
    put(sys.dir.path() / "elsewhere" / "port_xmit_data", 5);
    put(sys.dir.path() / "elsewhere" / "port_rcv_data", 5);
    fs::create_directories(sys.port());
    fs::create_directory_symlink(sys.dir.path() / "elsewhere", sys.port() / "counters");
    sys.link("infiniband", "mlx5_0", sys.dev());
    NicTraffic nic(sys.root());
    CHECK_FALSE(nic.present());
    fs::remove(sys.port() / "counters");
    put(sys.port() / "counters" / "port_xmit_data", 5);
    fs::create_symlink(sys.dir.path() / "elsewhere" / "port_rcv_data", sys.port() / "counters" / "port_rcv_data");
    NicTraffic file_link(sys.root());
    CHECK_FALSE(file_link.present());  // a counter that is a link: the read is unknown
}

TEST_CASE("a 10 s job whose steps cross the ports hangs: called within 3 steps on still ports, 3x its quiet without them") {
    auto job = ported(10, 1500);
    job.hang = 1404;
    job.end = 1800;
    const auto r = simulate(StallConfig{}, job);
    REQUIRE(r.verdict_at);
    INFO(r.verdict.evidence);
    CHECK(*r.verdict_at - job.hang <= 3 * 10);
    CHECK(has(r.verdict.evidence, "every node's network ports still"));
    const auto before = simulate(ports_off(), job);
    REQUIRE(before.verdict_at);
    CHECK(*before.verdict_at > *r.verdict_at + 10);
    CHECK_FALSE(has(before.verdict.evidence, "network ports"));
}

TEST_CASE("a collective slowed by a congested link moves bytes: the ports spare it; read as still, they would not") {
    auto job = ported(10, 1800);
    // After the pace is learned, one step's collective takes 25 s at 50 MB/s: every GPU spinning
    // as in a hang, no /proc bytes, only the ports moving (2.5 steps: under 3x the quiet).
    hold(job, 1401, 1426);
    job.end = 1700;
    auto trickle = job;
    job.nic.push_back({1402, 1426, 5e7});
    CHECK_FALSE(simulate(StallConfig{}, job).verdict_at);
    // The same straggle with its bytes under stall_cadence_nic_bytes: the ports still, a verdict.
    trickle.nic.push_back({1402, 1426, 1e5});
    const auto called = simulate(StallConfig{}, trickle);
    REQUIRE(called.verdict_at);
    CHECK(has(called.verdict.evidence, "every node's network ports still"));
}

TEST_CASE("ports that never carried the job's steps (NVLink alone, a fabric the counters miss) change nothing") {
    auto job = ported(10, 1500);
    job.nic.clear();
    job.nic.push_back({0, 1e9, 8192});
    job.hang = 1404;
    job.end = 1800;
    const auto with = simulate(StallConfig{}, job), without = simulate(ports_off(), job);
    REQUIRE(with.verdict_at);
    REQUIRE(without.verdict_at);
    CHECK(*with.verdict_at == *without.verdict_at);
    CHECK_FALSE(has(with.verdict.evidence, "network ports"));
}

TEST_CASE("stall_cadence_nic_floor: still ports need 5 s, so a lost packet's retransmission timeout is no hang") {
    auto job = ported(2, 1500);
    // A slow collective on a lossy link: bytes, then nothing for a retransmission timeout (4.3 s
    // at NCCL_IB_TIMEOUT 20), then bytes again: under 3x the quiet, over 1.25x it.
    hold(job, 1401, 1406.5);
    job.nic.push_back({1402, 1402.2, 5e7});
    job.nic.push_back({1406.5, 1407, 5e7});
    job.end = 1450;
    CHECK_FALSE(simulate(StallConfig{}, job).verdict_at);
    auto floor0 = StallConfig{};
    floor0.cadence.nic_floor = 0;
    CHECK(simulate(floor0, job).verdict_at);
    // A 3 s job's hang: at the floor on still ports (and a read), sooner than 3x its quiet; at
    // floor 0 sooner still.
    auto hung = ported(3, 1500);
    hung.hang = 1402.5;
    hung.end = 1500;
    const auto r = simulate(StallConfig{}, hung), before = simulate(ports_off(), hung), early = simulate(floor0, hung);
    REQUIRE(r.verdict_at);
    REQUIRE(before.verdict_at);
    REQUIRE(early.verdict_at);
    INFO(r.verdict.evidence);
    CHECK(has(r.verdict.evidence, "(at least 5 s)"));
    CHECK(*r.verdict_at - hung.hang <= 5 + 2);
    CHECK(*r.verdict_at < *before.verdict_at);
    CHECK(*early.verdict_at < *r.verdict_at);
    // The floor never makes a verdict later than the margin's: at 10 s, 3x the 3 s quiet calls it.
    auto floor10 = StallConfig{};
    floor10.cadence.nic_floor = 10;
    const auto late = simulate(floor10, hung);
    REQUIRE(late.verdict_at);
    CHECK(*late.verdict_at == *before.verdict_at);
}

TEST_CASE("trusted ports: the processes and ports are read at a quarter of the ports' window's slack, not the margin's") {
    // A 2 s job whose steps cross the ports, with 60 s of host work (CPU, no step) once past the
    // warm-up: its longest quiet is a step and where in a read's span the work ended.
    auto job = ported(2, 1500);
    job.steps.erase(std::remove_if(job.steps.begin(), job.steps.end(), [](double t) { return t > 1000 && t < 1062; }),
                    job.steps.end());
    job.cpu.push_back({1000, 1060, 1});
    // Hung just after a step's all-reduce (1399 to 1399.8), at every tenth of a step: the last bytes
    // are stamped at the read that sees them, so the read pace is verdict delay.
    double worst = 0;
    for (double off = 0.85; off < 2.8; off += 0.2) {
        auto hung = job;
        hung.hang = 1399 + off;
        hung.end = 1500;
        const auto r = simulate(StallConfig{}, hung);
        REQUIRE(r.verdict_at);
        INFO(r.verdict.evidence);
        CHECK(r.verdict.evidence.find("every node's network ports still") != std::string::npos);
        worst = std::max(worst, *r.verdict_at - hung.hang);
        // Read at the ports' pace: a quarter of what the 5 s floor leaves over the quiet (at least
        // stall_heartbeat_probe), not half the quiet (the margin's quarter: 2 x the quiet / 4).
        CHECK(r.read_interval == doctest::Approx(std::max(0.5, (5 - r.state.step) / 4)).epsilon(0.01));
        CHECK(r.read_interval < 0.5 * r.state.step);
    }
    // Within the 5 s floor and a read at the ports' pace (0.5 s) of the hang, 3 of its steps; at
    // the margin's pace (a read every 2 s) up to 5.95 s.
    CHECK(worst <= 5 + 0.5);
    // A NCCL hang: a host thread spin-waits on the spinning GPUs (a core busy). Its CPU counts until
    // a sample sees the spin; a read whose CPU alone counted takes a sample with the next read, so
    // that costs one read more, not the margin's pace of samples.
    double spun = 0;
    for (double off = 0.85; off < 2.8; off += 0.2) {
        auto hung = job;
        hung.hang = 1399 + off;
        hung.hang_cpu = 1;
        hung.end = 1500;
        const auto r = simulate(StallConfig{}, hung);
        REQUIRE(r.verdict_at);
        spun = std::max(spun, *r.verdict_at - hung.hang);
    }
    CHECK(spun <= 3 * 2);
    // Where the ports tell nothing the margin's pace stands: a quarter of its 2x the quiet.
    auto off = job;
    off.hang = 1400;
    off.end = 1500;
    const auto margin = simulate(ports_off(), off);
    REQUIRE(margin.verdict_at);
    CHECK(margin.read_interval == doctest::Approx(2.0 * margin.state.step / 4).epsilon(0.01));
}

TEST_CASE("the watch samples the GPUs at the margin's pace, and with the next read after CPU alone counted") {
    const StallConfig c;
    NodeTracker n(c, "n1", 0);
    for (double t = 1; t < 2000; t += 2) {
        n.on_heartbeat(t, t);
        n.on_activity({true, 1e6, 0, false}, 0.5, t);
    }
    const double margin = 2.0 * n.state().step / 4;
    CHECK(n.sample_interval(100) == 30);  // the warm-up: stall_probe
    CHECK(n.sample_interval(2000) == doctest::Approx(std::max(0.5, margin)));
    n.on_activity({true, 0, 0.5, false}, 0.5, 2000.5);  // a core busy, no bytes: the GPUs may spin
    CHECK(n.sample_interval(2001) == n.process_interval(2001));
    n.on_activity({true, 1e6, 0.5, false}, 0.5, 2001);  // bytes too: activity whatever the GPUs do
    CHECK(n.sample_interval(2001) == doctest::Approx(std::max(0.5, margin)));
}

TEST_CASE("reads in the same instant (a quick read, then a full look's) tell nothing: no motion") {
    StallConfig c;
    NodeTracker t(c, "n1", 0);
    t.on_nic({true, 0, 0}, true, 1, 700);
    CHECK(t.state().nic_at == 0);
    t.on_nic({true, 0, 0}, true, 0, 700);
    CHECK(t.state().nic_at == 0);
    t.on_nic({false, 0, 0}, true, 1, 701);  // no baseline: unknown, never still
    CHECK(t.state().nic_at == 701);
    t.on_nic({true, 2e6, 0}, true, 1, 702);
    CHECK(t.state().nic_at == 702);
    t.on_nic({true, 0, 3}, true, 1, 703);  // port_xmit_wait: data queued, no credit: congestion
    CHECK(t.state().nic_at == 703);
    auto off = c;
    off.cadence.nic = false;
    NodeTracker o(off, "n1", 0);
    o.on_nic({false, 0, 0}, true, 1, 701);
    CHECK(o.state().nic_at == 0);
    CHECK_FALSE(o.state().nic_seen);
}

TEST_CASE("a job's nodes: the ports' window only when every node's ports carried the steps, from the last that moved") {
    StallConfig c;
    c.probe = 1000;
    NodeState a, b;
    for (auto* s : {&a, &b}) {
        s->ts = 1100;
        s->pattern = Pattern::spin;
        s->active_at = 1000;
        s->log_seen = true;
        s->step = 10, s->steps = 50;
        s->activity_seen = true;
        s->nic_seen = true;
    }
    a.node = "n1", b.node = "n2";
    a.nic_at = 1000, b.nic_at = 1009;  // n2's ports moved last
    auto v = judge({a, b}, {"n1", "n2"}, 0, 1020, c, true);
    CHECK_FALSE(v.stalled);
    CHECK(v.due == doctest::Approx(1009 + 12.5));
    CHECK(v.nic_window == doctest::Approx(12.5));
    v = judge({a, b}, {"n1", "n2"}, 0, 1022, c, true);
    CHECK(v.stalled);
    CHECK(has(v.evidence, "no bytes for 13 s"));
    b.nic_seen = false;  // n2's ports tell nothing: 3x the quiet
    CHECK_FALSE(judge({a, b}, {"n1", "n2"}, 0, 1022, c, true).stalled);
    CHECK(judge({a, b}, {"n1", "n2"}, 0, 1030, c, true).stalled);
}

namespace {

// Two nodes of a 2 s job, each tracker fed as its sampler feeds it: the heartbeat every 0.5 s, the
// GPUs, the processes and the ports every second, a full look every 30 s. Steps at every even
// second up to `last`, the data loader reading and the all-reduce crossing the ports with each.
// After the last step, until `to`: `io` bytes/s written and `gpus` as the GPUs read on the node.
void two_s_job(NodeTracker& n, double from, double to, double last, double io,
               const std::vector<acme::telemetry::Sample>& gpus) {
    for (double t = from; t <= to + 1e-9; t += 0.5) {
        const double step = std::min(last, 2 * std::floor(t / 2));
        n.on_heartbeat(step >= 2 ? std::optional<double>(step) : std::nullopt, t);
        if (t != std::floor(t)) continue;
        const bool stepped = t <= last && static_cast<long long>(t) % 2 == 0;
        if (t <= last) n.on_samples(stepped ? acme::test::sim_gpus(95, 300, 40) : acme::test::sim_gpus(0, 60, 0), t);
        else n.on_samples(gpus, t);
        n.on_activity({true, stepped ? 2e6 : t > last ? io : 0, t > last && io > 0 ? 1.0 : 0, false}, 1, t);
        n.on_nic({true, stepped ? 5e8 : 0, 0}, true, 1, t);
        if (static_cast<long long>(t) % 30 == 0) n.on_probe({static_cast<long long>(step) * 10, step, {}, {}}, t);
    }
}

// What the share holds of a node: its state as written at a full look, then read back.
NodeState written(NodeTracker& n, double now, double last) {
    n.on_probe({static_cast<long long>(last) * 10, last, {}, {}}, now);
    return *parse_state(format_state(n.state()));
}

}  // namespace

TEST_CASE("a job's nodes: a state is evidence of its node's quiet only up to when it was written (a save begun after it is no hang)") {
    StallConfig c;
    c.warmup = 60;
    const auto spin = acme::test::sim_gpus(97, 80, 1), idle = acme::test::sim_gpus(0, 60, 0);
    // Both nodes learn the job's pace (2 s, its ports carrying the steps) to the last step at 300.
    NodeTracker n1(c, "n1", 0), n2(c, "n2", 0);
    two_s_job(n1, 0.5, 300, 300, 0, spin);
    two_s_job(n2, 0.5, 300, 300, 0, idle);
    REQUIRE(n1.state().nic_seen);
    REQUIRE(n2.state().nic_seen);
    // n2's full look at 301.25 writes its state: quiet since the step. Then rank 0's checkpoint
    // save starts there (GPUs idle, 200 MB/s written to local disk, nothing on the ports), while
    // n1 spins at the barrier, its ports still. n1 judges with n2's line as the share holds it.
    two_s_job(n2, 300.5, 301, 300, 0, idle);
    const NodeState n2_line = written(n2, 301.25, 300);
    REQUIRE(n2_line.pattern == Pattern::idle);
    two_s_job(n2, 301.5, 330, 300, 2e8, idle);
    for (double t = 300.5; t <= 320; t += 0.5) {
        two_s_job(n1, t, t, 300, 0, spin);
        const auto v = judge({written(n1, t, 300), n2_line}, {"n1", "n2"}, 0, t, c, true);
        CHECK_MESSAGE(!v.stalled, "t=" << t << ": " << v.evidence);
        // The ports' window (5 s from the last motion at 300) closed by now, not by n2's line.
        if (t >= 305.5) CHECK_MESSAGE(v.waiting, "t=" << t);
    }
    // n2's next look writes the save's motion: no more waiting, the window runs from it.
    const auto v = judge({written(n1, 331, 300), written(n2, 330.25, 300)}, {"n1", "n2"}, 0, 331, c, true);
    CHECK_FALSE(v.stalled);
    CHECK_FALSE(v.waiting);
    CHECK(v.due > 331);
    // The same job truly hung on both nodes: no verdict on n2's line written before the window
    // closed; once n2 writes after the close (its own look at the close), the ports' window calls it.
    NodeTracker h1(c, "n1", 0), h2(c, "n2", 0);
    two_s_job(h1, 0.5, 300, 300, 0, spin);
    two_s_job(h2, 0.5, 300, 300, 0, idle);
    two_s_job(h2, 300.5, 301, 300, 0, idle);
    const NodeState h2_line = written(h2, 301.25, 300);
    two_s_job(h1, 300.5, 305.5, 300, 0, spin);
    two_s_job(h2, 301.5, 305.5, 300, 0, idle);
    auto hung = judge({written(h1, 305.5, 300), h2_line}, {"n1", "n2"}, 0, 305.5, c, true);
    CHECK_FALSE(hung.stalled);
    CHECK(hung.waiting);
    hung = judge({written(h1, 305.5, 300), written(h2, 305.5, 300)}, {"n1", "n2"}, 0, 305.5, c, true);
    REQUIRE(hung.stalled);
    CHECK(has(hung.evidence, "every node's network ports still"));
    // Without a share (one node's own state, fresh), nothing changes: its verdict at the close.
    NodeTracker alone(c, "n1", 0);
    two_s_job(alone, 0.5, 305.5, 300, 0, spin);
    CHECK(judge({written(alone, 305.5, 300)}, {}, 0, 305.5, c, false).stalled);
}

TEST_CASE("the ports' state travels in the share's line; an older sampler's line reads as ports that tell nothing") {
    NodeState s;
    s.node = "n1";
    s.nic_seen = true;
    s.nic_at = 1234.5;
    s.activity_seen = true;
    const auto back = parse_state(format_state(s));
    REQUIRE(back);
    CHECK(back->nic_seen);
    CHECK(back->nic_at == doctest::Approx(1234.5));
    auto line = format_state(s);
    line = line.substr(0, line.rfind(' '));
    line = line.substr(0, line.rfind(' '));  // the 20 fields before the ports'
    const auto old = parse_state(line);
    REQUIRE(old);
    CHECK(old->activity_seen);
    CHECK_FALSE(old->nic_seen);
    CHECK_FALSE(parse_state(line + " 2 5.000"));
}

TEST_CASE("stall_cadence_nic, _nic_bytes, _nic_margin, _nic_floor: plugstack keys, carried to the sampler") {
    StallConfig c;
    std::vector<std::string> errors;
    CHECK(set_stall_key("stall_cadence_nic", "off", c, errors));
    CHECK(set_stall_key("stall_cadence_nic_bytes", "4194304", c, errors));
    CHECK(set_stall_key("stall_cadence_nic_margin", "0.5", c, errors));
    CHECK(set_stall_key("stall_cadence_nic_floor", "6", c, errors));
    CHECK(errors.empty());
    StallConfig back;
    for (const auto& w : stall_words(c)) {
        const auto eq = w.find('=');
        set_stall_key(w.substr(0, eq), w.substr(eq + 1), back, errors);
    }
    CHECK_FALSE(back.cadence.nic);
    CHECK(back.cadence.nic_bytes == 4194304);
    CHECK(back.cadence.nic_margin == 0.5);
    CHECK(back.cadence.nic_floor == 6);
    CHECK(set_stall_key("stall_cadence_nic", "maybe", c, errors));
    REQUIRE(errors.size() == 1);
    CHECK(errors[0] == "gputrace: plugstack argument stall_cadence_nic=maybe: want on or off");
    CHECK(set_stall_key("stall_cadence_nic_floor", "-1", c, errors));
    CHECK(errors.back() == "gputrace: plugstack argument stall_cadence_nic_floor=-1: want a number in [0, 86400]");
}

TEST_CASE("stall_cadence_nic_ignore: a management Ethernet always moving is left out by name or glob; lo always") {
    FakeSys sys;
    sys.ib(1000, 500);
    sys.net("eno1", 0, 0);
    sys.net("docker0", 0, 0);
    sys.net("ib0", 0, 0);
    NicTraffic all(sys.root()), some(sys.root(), {"eno1", "dock*"});
    REQUIRE(all.present());
    REQUIRE(some.present());
    sys.net("eno1", 50 << 20, 50 << 20);  // 100 MiB of management traffic
    sys.net("docker0", 1 << 20, 0);
    CHECK(all.read().bytes == (100 << 20) + (1 << 20));
    const auto d = some.read();
    CHECK(d.seen);
    CHECK(d.bytes == 0);
    sys.net("ib0", 7, 0);  // a device not listed still counts
    CHECK(some.read().bytes == 7);
    // An RDMA device left out: its ports tell nothing; with none left, no evidence (the old rule).
    NicTraffic no_ib(sys.root(), {"mlx5_*"});
    CHECK_FALSE(no_ib.present());
    CHECK_FALSE(no_ib.read().seen);
    CHECK(nic_ignored({"en[op]*"}, "enp3s0"));
    CHECK_FALSE(nic_ignored({"en[op]*"}, "ens1"));
    CHECK_FALSE(nic_ignored({}, "eno1"));
}

TEST_CASE("stall_cadence_nic_ignore: the key, its bad values, carried to the sampler") {
    CHECK(parse_nic_ignore("") == std::vector<std::string>{});
    CHECK(parse_nic_ignore("eno1,docker*,enp?s0f[01],br-a.1:x@y") ==
          std::vector<std::string>{"eno1", "docker*", "enp?s0f[01]", "br-a.1:x@y"});
    for (const char* bad : {",", "eno1,", ",eno1", "eno1,,x", "a b", "../x", "x/y", "eno1\n", "a=b", "$(x)"})
        CHECK_FALSE(parse_nic_ignore(bad));
    CHECK_FALSE(parse_nic_ignore(std::string(65, 'a')));
    CHECK(parse_nic_ignore(std::string(64, 'a')));
    std::string many = "a";
    for (int i = 0; i < 16; ++i) many += ",a";
    CHECK_FALSE(parse_nic_ignore(many));  // 17
    StallConfig c;
    std::vector<std::string> errors;
    CHECK(set_stall_key("stall_cadence_nic_ignore", "eno1,docker*", c, errors));
    CHECK(errors.empty());
    StallConfig back;
    for (const auto& w : stall_words(c)) {
        const auto eq = w.find('=');
        set_stall_key(w.substr(0, eq), w.substr(eq + 1), back, errors);
    }
    CHECK(errors.empty());
    CHECK(back.cadence.nic_ignore == std::vector<std::string>{"eno1", "docker*"});
    // Empty: none left out (and no word for it).
    CHECK(set_stall_key("stall_cadence_nic_ignore", "", c, errors));
    CHECK(c.cadence.nic_ignore.empty());
    for (const auto& w : stall_words(c)) CHECK_FALSE(has(w, "nic_ignore"));
    CHECK(set_stall_key("stall_cadence_nic_ignore", "eno1 x", back, errors));
    REQUIRE(errors.size() == 1);
    CHECK(errors[0] == "gputrace: plugstack argument stall_cadence_nic_ignore=eno1 x: want a comma-separated list of at "
                       "most 16 device names or globs (letters, digits, ._-:@*?[]!^)");
    CHECK(back.cadence.nic_ignore == std::vector<std::string>{"eno1", "docker*"});  // kept as it was
}
