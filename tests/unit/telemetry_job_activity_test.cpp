// What the job's processes do between two looks (job_activity.hpp), and the decision it feeds:
// a paced verdict only when the job has a learned pace and nothing of it moved (no progress, no
// I/O, no disk wait, no CPU while its GPUs idle) for its longest quiet and the margin more
// (cadence.hpp).
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "spank/gputrace/core/cadence.hpp"
#include "spank/gputrace/core/job_activity.hpp"
#include "spank/gputrace/core/stall.hpp"
#include "tests/unit/stall_sim.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme::telemetry;
using acme::test::regular_steps;
using acme::test::SimJob;
using acme::test::simulate;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string stat_line(int pid, const std::string& comm, char state, int ppid, unsigned long long cpu, unsigned long long start) {
    return fmt::format("{} ({}) {} {} {} 0 0 -1 4194560 100 0 0 0 {} 0 0 0 20 0 1 0 {} 1000 100\n", pid, comm, state,
                       ppid, pid, cpu, start);
}

std::string io_text(unsigned long long rchar, unsigned long long wchar, unsigned long long rb, unsigned long long wb) {
    return fmt::format("rchar: {}\nwchar: {}\nsyscr: 5\nsyscw: 5\nread_bytes: {}\nwrite_bytes: {}\ncancelled_write_bytes: 0\n",
                       rchar, wchar, rb, wb);
}

// A process in a fake /proc tree.
void process(const acme::test::TempDir& proc, int pid, int ppid, const std::string& comm, const std::string& cmdline,
             int uid, unsigned long long cpu, unsigned long long io_bytes, char state = 'S') {
    const auto dir = proc.path() / std::to_string(pid);
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "stat") << stat_line(pid, comm, state, ppid, cpu, 1000 + static_cast<unsigned long long>(pid));
    std::ofstream(dir / "cmdline") << cmdline << '\0';
    std::ofstream(dir / "status") << "Name:\t" << comm << "\nUid:\t" << uid << "\t" << uid << "\t" << uid << "\t" << uid << "\n";
    std::ofstream(dir / "io") << io_text(io_bytes, 0, 0, 0);
}

// Shipped keys, a look every 2 s.
StallConfig keys() {
    StallConfig c;
    c.probe = 2;
    return c;
}

// A 2 s job, its processes seen, learned by 1000 s; `pause` from 1000 s to 1090 s, then it trains
// until 1400 s and hangs (GPUs spinning).
SimJob paused_job(bool seen) {
    SimJob job;
    job.steps = regular_steps(1, 1000, 2);
    for (const double t : regular_steps(1090, 1400, 2)) job.steps.push_back(t);
    job.hang = 1400;
    job.end = 1800;
    job.processes_seen = seen;
    job.step_io = 4e6;
    return job;
}

}  // namespace

TEST_CASE("/proc/PID/stat: the fields after the command name's last ')', whatever the name holds") {
    const auto s = parse_proc_stat(stat_line(7, "py) S 1 (x", 'D', 42, 30, 555));
    REQUIRE(s);
    CHECK(s->comm == "py) S 1 (x");
    CHECK(s->state == 'D');
    CHECK(s->ppid == 42);
    CHECK(s->cpu_ticks == 30);
    CHECK(s->start == 555);
    CHECK_FALSE(parse_proc_stat("7 (x) S 1"));
    CHECK_FALSE(parse_proc_stat("7 x S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20"));
    CHECK_FALSE(parse_proc_stat(""));
}

TEST_CASE("/proc/PID/io: the call and the storage counts, or nothing when a field is missing or bad") {
    const auto io = parse_proc_io(io_text(10, 20, 300, 400));
    REQUIRE(io);
    CHECK(io->calls == 30);
    CHECK(io->storage == 700);
    CHECK_FALSE(parse_proc_io("rchar: 1\nwchar: 2\n"));
    CHECK_FALSE(parse_proc_io("rchar: 1\nwchar: x\nread_bytes: 1\nwrite_bytes: 1\n"));
}

TEST_CASE("activity between two looks: each process's growth; a new one whole, a reused pid as new, a gone one nothing") {
    ProcSample a{10, 1, {1000, 50}, 100, false}, b{11, 1, {0, 0}, 0, false}, gone{12, 1, {9000000000ULL, 9000000000ULL}, 900, false};
    const std::vector<ProcSample> before = {a, b, gone};
    ProcSample a2 = a, b_reused{11, 2, {300, 0}, 50, false}, fresh{13, 5, {0, 2000}, 100, true};
    a2.io = {1500, 5000};  // 500 through calls, 4950 to storage (an mmap write): the larger counts
    a2.cpu_ticks = 300;
    const auto act = activity_between(before, {a2, b_reused, fresh}, 100);
    CHECK(act.seen);
    CHECK(act.io_bytes == doctest::Approx(4950 + 0 + 2000));
    CHECK(act.cpu_s == doctest::Approx((200 + 50 + 100) / 100.0));
    CHECK(act.disk_wait);
    CHECK_FALSE(activity_between(before, {}, 100).seen);
}

TEST_CASE("the job's processes: the descendants of root's slurmstepds of the job, not the stepds, not a user's look-alike") {
    acme::test::TempDir proc;
    process(proc, 100, 1, "slurmstepd", "slurmstepd: [42.batch]", 0, 5, 0);
    process(proc, 101, 100, "python", "python train.py", 1000, 10, 1000);
    process(proc, 102, 101, "pt_data_worker", "python train.py", 1000, 10, 1000);
    process(proc, 200, 1, "python", "python other.py", 1000, 10, 1000);
    process(proc, 300, 1, "slurmstepd", "slurmstepd: [42.0]", 1000, 5, 0);  // a user's, titled like one
    process(proc, 301, 300, "dd", "dd", 1000, 10, 1000);
    JobProcesses job(42, proc.path().string());
    CHECK_FALSE(job.look().seen);  // no baseline yet: what moved is unknown
    process(proc, 100, 1, "slurmstepd", "slurmstepd: [42.batch]", 0, 500, 9e6);
    process(proc, 101, 100, "python", "python train.py", 1000, 10, 1500);
    process(proc, 102, 101, "pt_data_worker", "python train.py", 1000, 30, 3000, 'D');
    process(proc, 200, 1, "python", "python other.py", 1000, 900, 9e6);
    process(proc, 301, 300, "dd", "dd", 1000, 900, 9e6);
    const auto second = job.look();
    CHECK(second.seen);
    CHECK(second.io_bytes == 500 + 2000);
    CHECK(second.cpu_s == doctest::Approx(20 / static_cast<double>(sysconf(_SC_CLK_TCK))));
    CHECK(second.disk_wait);
    CHECK_FALSE(JobProcesses(43, proc.path().string()).look().seen);  // no stepd of job 43: not seen
}

TEST_CASE("stall_window: where the processes are seen, the longest quiet and the margin more, no k, no floor, under the ceiling") {
    const CadenceConfig shipped;
    const auto w = stall_window(300, "spin", 4, 40, shipped, true);
    CHECK(w.seconds == 12);  // margin 2: three times the quiet
    CHECK(w.paced);
    CHECK(w.why == "the job's longest quiet of 4 s seen over 40 steps and 200 % more, its processes idle too");
    CHECK(stall_window(300, "spin", 4, 40, shipped, false).seconds == 300);  // unseen: the 600 s floor
    auto c = shipped;
    c.k = 10;  // k is the unseen case's
    CHECK(stall_window(300, "spin", 4, 40, c, true).seconds == 12);
    c.margin = 1;
    CHECK(stall_window(300, "spin", 4, 40, c, true).seconds == 8);
    c.margin = 0.25;
    CHECK(stall_window(300, "spin", 4, 40, c, true).seconds == 5);
    CHECK(stall_window(300, "spin", 4, 40, c, true).why ==
          "the job's longest quiet of 4 s seen over 40 steps and 25 % more, its processes idle too");
    CHECK(stall_window(300, "spin", 100, 40, shipped, true).seconds == 300);  // 3x 100 s is past the ceiling
    CHECK(stall_window(300, "spin", 240, 40, shipped, true).seconds == 300);
    CHECK_FALSE(stall_window(300, "spin", 240, 40, shipped, true).paced);
    c.k = 0;  // k 0: the fixed windows everywhere
    CHECK(stall_window(300, "spin", 4, 40, c, true).seconds == 300);
}

TEST_CASE("a quiet is learned from the earliest its start may have been: seen again at another phase of the looks, no longer") {
    // The bytes seen at the look at 104 moved after the look at 102: the quiet to the step at 110
    // may have been 8 s long, not 6.
    Cadence cadence(0);
    cadence.observe(100, 100, 100, 100);  // the warm-up ends at 100
    cadence.observe(104, 102, 100, 100);
    cadence.observe(110, 110, 110, 100);
    CHECK(cadence.longest() == 8);
    // A disk wait is seen at the look itself: the quiet from it is counted from the look.
    Cadence asleep(0);
    asleep.observe(100, 100, 100, 100);
    asleep.observe(104, 104, 100, 100);
    asleep.observe(110, 110, 110, 100);
    CHECK(asleep.longest() == 6);
}

TEST_CASE("a judge not yet calling a paced hang says when its window closes; the sampler's look then calls it on time") {
    auto c = keys();
    NodeState n;
    n.node = "n1";
    n.ts = 1003;
    n.pattern = Pattern::spin;
    n.active_at = 1000;
    n.log_seen = true;
    n.step = 8, n.steps = 50;
    n.activity_seen = true;
    n.activity_at = 1001;
    const auto v = judge({n}, {}, 0, 1003, c, false);
    CHECK_FALSE(v.stalled);
    CHECK(v.due == doctest::Approx(1001 + 8 * (1 + c.cadence.margin)));
    n.ts = 1001 + 8 * (1 + c.cadence.margin);
    CHECK(judge({n}, {}, 0, n.ts, c, false).stalled);
    // A 10 s job looked at every 7 s: called within a sample of its window, not up to a look late.
    c.probe = 7;
    SimJob job;
    job.steps = regular_steps(1, 1400, 10);
    job.hang = 1400;
    job.end = 1800;
    job.processes_seen = true;
    job.step_io = 4e6;
    const auto r = simulate(c, job);
    REQUIRE(r.verdict_at);
    INFO(r.verdict.evidence);
    // "no progress for N s, the job's longest quiet of Q s ...": N is the window (Q and the margin,
    // each rounded) and a sample at most, where a look every 7 s could have been 7 s late.
    const auto& e = r.verdict.evidence;
    const auto learned = e.find("the job's longest quiet of ");
    REQUIRE(learned != std::string::npos);
    REQUIRE(e.rfind("no progress for ", 0) == 0);
    const double quiet = std::stod(e.substr(learned + 27)), waited = std::stod(e.substr(16));
    CHECK(waited <= (quiet + 0.5) * (1 + c.cadence.margin) + 1.5);
}

TEST_CASE("process_interval: stall_probe in the warm-up, then a quarter of the margin of the quiet so far, within the quick looks and stall_probe") {
    const StallConfig c;  // shipped: stall_probe 30, stall_heartbeat_probe 0.5, margin 2
    const auto track = [&](double step, bool seen) {
        auto n = std::make_unique<NodeTracker>(c, "n1", 0);
        for (double t = 1; t < 2000; t += step) {
            n->on_heartbeat(t, t);
            n->on_activity({true, 1e6, 0, false}, seen ? 0.5 : 0, t);
        }
        return n;
    };
    CHECK(NodeTracker(c, "n1", 0).process_interval(100) == 30);
    const auto two = track(2, true), ten = track(10, true), minute = track(60, true);
    CHECK(two->process_interval(100) == 30);   // warm-up: nothing learned from it
    CHECK(two->process_interval(2000) == doctest::Approx(2 * 2.0 / 4));
    CHECK(ten->process_interval(2000) == doctest::Approx(10 * 2.0 / 4));
    CHECK(minute->process_interval(2000) == 30);  // 60 s x 2 / 4 is past stall_probe
    auto quarter = c;
    quarter.cadence.margin = 0.25;
    NodeTracker fast(quarter, "n1", 0);
    for (double t = 1; t < 2000; t += 2) {
        fast.on_heartbeat(t, t);
        fast.on_activity({true, 1e6, 0, false}, 0.5, t);
    }
    CHECK(fast.process_interval(2000) == 0.5);  // 2 s x 0.25 / 4 is under the quick looks' 0.5 s
    auto off = c;
    off.heartbeat_probe = 0;
    NodeTracker no_quick(off, "n1", 0);
    for (double t = 1; t < 2000; t += 2) no_quick.on_activity({true, 1e6, 0, false}, 2, t);
    CHECK(no_quick.process_interval(2000) == 30);
}

TEST_CASE("closes_at: a sign seen by a quick look puts the window off, never sooner than judged, activity only when paced") {
    Verdict v;
    v.due = 100, v.window = 10, v.fixed = 300, v.paced = true;
    NodeState n;
    n.active_at = 80;
    CHECK(closes_at(v, n) == 100);  // nothing newer: as judged
    n.active_at = 95;
    CHECK(closes_at(v, n) == 105);  // a heartbeat at 95: its window from there
    n.activity_at = 97;
    CHECK(closes_at(v, n) == 107);  // bytes moved at 97: paced quiet counts from them
    v.paced = false;
    CHECK(closes_at(v, n) == 105);  // the fixed window counts progress only
    v.window = 1000;
    CHECK(closes_at(v, n) == 95 + 300);  // never past the fixed window from progress
    v.due = 0;
    CHECK(closes_at(v, n) == 0);
}

TEST_CASE("a quick read of the job's processes reads the ones the last walk found; a new one is counted whole at the next walk") {
    acme::test::TempDir proc;
    process(proc, 100, 1, "slurmstepd", "slurmstepd: [42.batch]", 0, 5, 0);
    process(proc, 101, 100, "python", "python train.py", 1000, 10, 1000);
    JobProcesses job(42, proc.path().string());
    CHECK_FALSE(job.look(false).seen);  // no baseline: a walk, unseen
    process(proc, 101, 100, "python", "python train.py", 1000, 10, 1500);
    process(proc, 103, 101, "pt_data_worker", "python train.py", 1000, 0, 7000);
    const auto quick = job.look(false);
    CHECK(quick.seen);
    CHECK(quick.io_bytes == 500);  // 101's growth; 103 is not known yet
    const auto walk = job.look(true);
    CHECK(walk.io_bytes == 7000);  // 103 whole, 101 unchanged
    std::filesystem::remove_all(proc.path() / "101");
    std::filesystem::remove_all(proc.path() / "103");
    CHECK_FALSE(job.look(false).seen);  // every known process gone: unseen, the next read walks
}

TEST_CASE("at the shipped stall_probe (30 s) and interval (10 s), a 2 s job's hang is called at its pace (its quiet and the margin, 3 steps at margin 2): quick looks") {
    const StallConfig c;
    SimJob job;
    job.steps = regular_steps(1, 1400, 2);
    job.hang = 1399.5;
    job.end = 1800;
    job.processes_seen = true;
    job.step_io = 4e6;
    job.gpu_interval = 10;
    const auto r = simulate(c, job);
    REQUIRE(r.verdict_at);
    INFO(r.verdict.evidence);
    const double paced = (1 + c.cadence.margin) * 2 + c.heartbeat_probe;  // the window and a quick look
    CHECK(*r.verdict_at - job.hang <= paced);
    CHECK(has(r.verdict.evidence, ", the job's longest quiet of 2 s "));
    // Without quick looks it is the looks' pace, not the job's.
    auto slow = c;
    slow.heartbeat_probe = 0;
    const auto late = simulate(slow, job);
    // (None at all here: 10 s samples never land on a step's busy second, so the GPUs' peak power is
    // never seen and the hung collective's spin reads as busy.)
    CHECK((!late.verdict_at || *late.verdict_at - job.hang > paced));
}

TEST_CASE("a window closing between two GPU samples is judged on the GPUs now: a straggler's busy GPU is no hang") {
    // The processes not read (no quick GPU samples either), the floor at 0: 3x the 2 s step.
    StallConfig c;
    c.cadence.floor = 0;
    SimJob job;
    job.steps = regular_steps(1, 1000, 2);
    // One step of 13 s whose GPU computes (a slow rank) and shows nothing else.
    job.gpu_busy.emplace_back(1000, 1012);
    for (const double t : regular_steps(1012, 1400, 2)) job.steps.push_back(t);
    job.end = 1400;
    job.processes_seen = false;
    job.step_io = 4e6;
    job.gpu_interval = 10;
    const auto r = simulate(c, job);
    INFO((r.verdict_at ? r.verdict.evidence : std::string("none")));
    CHECK_FALSE(r.verdict_at);
}

TEST_CASE("a 2 s job's first 90 s checkpoint save that writes is no stall; its hang after is called within a few steps") {
    const auto c = keys();
    auto job = paused_job(true);
    job.io.push_back({1000, 1080, 2e8});
    job.disk_wait.emplace_back(1080, 1090);  // the fsync at its end: asleep on the disk, no bytes counted
    const auto r = simulate(c, job);
    REQUIRE(r.verdict_at);
    INFO(r.verdict.evidence);
    CHECK(*r.verdict_at > 1400);
    CHECK(*r.verdict_at - 1400 <= 5 * 2);
    CHECK(has(r.verdict.evidence, ", the job's longest quiet of "));
    CHECK(has(r.verdict.evidence, " steps and 200 % more, its processes idle too (log quiet, heartbeat stopped); n1 spin"));
}

TEST_CASE("the same save where the processes are not seen: the floor spares it; at floor 0 it is a false verdict") {
    auto c = keys();
    auto job = paused_job(false);
    job.io.push_back({1000, 1090, 2e8});
    auto r = simulate(c, job);
    REQUIRE(r.verdict_at);
    CHECK(*r.verdict_at - r.last_step >= c.spin_window);  // the floor, past the 300 s spin window
    c.cadence.floor = 0;
    r = simulate(c, job);
    REQUIRE(r.verdict_at);
    CHECK(*r.verdict_at < 1090);
}

TEST_CASE("seen but doing nothing in its pause, the save is called: the signal, not a floor, spares it") {
    auto job = paused_job(true);
    const auto r = simulate(keys(), job);
    REQUIRE(r.verdict_at);
    CHECK(*r.verdict_at < 1090);
}

TEST_CASE("host-only work with the GPUs idle (an upload, a recompilation) is no stall; a spin hang's CPU is not work") {
    const auto c = keys();
    auto job = paused_job(true);
    job.cpu.push_back({1000, 1090, 1});
    const auto r = simulate(c, job);
    REQUIRE(r.verdict_at);
    CHECK(*r.verdict_at > 1400);
    // The hung collective: the GPUs spin and a host thread spin-waits on them; still called.
    job.hang_cpu = 1;
    const auto spin = simulate(c, job);
    REQUIRE(spin.verdict_at);
    CHECK(*spin.verdict_at - 1400 <= 5 * 2);
    // A deadlock (GPUs idle) that still burns a core is not called at the pace: the fixed idle window.
    job.hang_spins = false;
    job.end = 1400 + 2000;
    const auto busy_host = simulate(c, job);
    REQUIRE(busy_host.verdict_at);
    INFO(busy_host.verdict.evidence);
    CHECK(*busy_host.verdict_at - busy_host.last_step >= c.idle_window);
    CHECK(has(busy_host.verdict.evidence, ", the fixed idle window; its processes still moved "));
}

TEST_CASE("a trickle under stall_cadence_io (a monitor's reads) is no activity; the hang is called at the pace") {
    const auto c = keys();
    auto job = paused_job(true);
    job.io.push_back({1000, 1090, 2e8});
    job.hang_io = 4096;
    const auto r = simulate(c, job);
    REQUIRE(r.verdict_at);
    CHECK(*r.verdict_at - 1400 <= 5 * 2);
    job.hang_io = c.cadence.io;  // at the threshold it counts: the spin window then calls it
    const auto busy = simulate(c, job);
    REQUIRE(busy.verdict_at);
    CHECK(*busy.verdict_at - busy.last_step >= c.spin_window);
}

TEST_CASE("the activity travels in the share's line; an older line reads as not seen") {
    NodeState s;
    s.node = "n2";
    s.ts = 10;
    s.activity_seen = true;
    s.activity_at = 1234.5;
    auto back = parse_state(format_state(s));
    REQUIRE(back);
    CHECK(back->activity_seen);
    CHECK(back->activity_at == doctest::Approx(1234.5));
    back = parse_state("acme-stall-v1 n1 1 busy 1 1 1 1 0 0 0 95.0 300.0 40.0 - - 2.000 40");
    REQUIRE(back);
    CHECK_FALSE(back->activity_seen);
    CHECK_FALSE(parse_state("acme-stall-v1 n1 1 busy 1 1 1 1 0 0 0 95.0 300.0 40.0 - - 2.000 40 2 5"));
    CHECK_FALSE(parse_state("acme-stall-v1 n1 1 busy 1 1 1 1 0 0 0 95.0 300.0 40.0 - - 2.000 40 1 -5"));
}

TEST_CASE("a job's nodes: the paced window only when every node sees its processes, from the last that moved") {
    auto c = keys();
    c.probe = 1000;
    NodeState a, b;
    for (auto* s : {&a, &b}) {
        s->ts = 1100;
        s->pattern = Pattern::spin;
        s->active_at = 1000;
        s->log_seen = true;
        s->step = 2, s->steps = 50;
        s->activity_seen = true;
    }
    a.node = "n1", b.node = "n2";
    b.activity_at = 1098;  // n2 still writing a shard of the checkpoint
    CHECK_FALSE(judge({a, b}, {"n1", "n2"}, 0, 1100, c, true).stalled);
    const double past = 1098 + 2 * (1 + c.cadence.margin) + 0.5;  // past n2's quiet window
    for (auto* s : {&a, &b}) s->ts = past;
    CHECK(judge({a, b}, {"n1", "n2"}, 0, past, c, true).stalled);
    b.activity_seen = false;  // n2 cannot see its processes: the floor again
    CHECK_FALSE(judge({a, b}, {"n1", "n2"}, 0, past, c, true).stalled);
}

TEST_CASE("stall_cadence_io, stall_cadence_cpu and stall_cadence_margin: plugstack keys, carried to the sampler") {
    StallConfig c;
    std::vector<std::string> errors;
    CHECK(set_stall_key("stall_cadence_io", "1048576", c, errors));
    CHECK(set_stall_key("stall_cadence_cpu", "0.5", c, errors));
    CHECK(set_stall_key("stall_cadence_margin", "0.75", c, errors));
    CHECK(errors.empty());
    CHECK(c.cadence.margin == 0.75);
    CHECK(c.cadence.io == 1048576);
    CHECK(c.cadence.cpu == 0.5);
    CHECK(set_stall_key("stall_cadence_cpu", "-1", c, errors));
    REQUIRE(errors.size() == 1);
    CHECK(errors[0] == "gputrace: plugstack argument stall_cadence_cpu=-1: want a number in [0, 4096]");
    StallConfig back;
    for (const auto& w : stall_words(c)) {
        const auto eq = w.find('=');
        set_stall_key(w.substr(0, eq), w.substr(eq + 1), back, errors);
    }
    CHECK(back.cadence.io == 1048576);
    CHECK(back.cadence.cpu == 0.5);
    CHECK(back.cadence.margin == 0.75);
    CHECK(set_stall_key("stall_cadence_margin", "-0.1", c, errors));
    CHECK(errors.back() == "gputrace: plugstack argument stall_cadence_margin=-0.1: want a number in [0, 100]");
}

TEST_CASE("stall_heartbeat_probe: a plugstack key in [0, 3600] (0: no quick looks), carried to the sampler") {
    StallConfig c;
    CHECK(c.heartbeat_probe == 0.5);
    std::vector<std::string> errors;
    CHECK(set_stall_key("stall_heartbeat_probe", "2", c, errors));
    CHECK(errors.empty());
    CHECK(c.heartbeat_probe == 2);
    StallConfig back;
    for (const auto& w : stall_words(c)) {
        const auto eq = w.find('=');
        set_stall_key(w.substr(0, eq), w.substr(eq + 1), back, errors);
    }
    CHECK(back.heartbeat_probe == 2);
    CHECK(set_stall_key("stall_heartbeat_probe", "0", c, errors));
    CHECK(c.heartbeat_probe == 0);
    CHECK(set_stall_key("stall_heartbeat_probe", "-1", c, errors));
    REQUIRE(errors.size() == 1);
    CHECK(errors[0] == "gputrace: plugstack argument stall_heartbeat_probe=-1: want a number in [0, 3600]");
    CHECK(c.heartbeat_probe == 0);
}

TEST_CASE("a gap reaching back into the warm-up (its coarse looks) is not learned; the first one past it is") {
    Cadence cad(0);
    cad.observe(570, 540, 570, 600);  // in the warm-up
    cad.observe(600, 570, 600, 600);  // at its end, seen since the look at 570
    cad.observe(602, 602, 602, 600);  // 32 s from 570: the looks' pace, not the job's
    CHECK(cad.longest() == 0);
    cad.observe(604.5, 604, 604, 600);
    CHECK(cad.longest() == 2.5);
}

TEST_CASE("busy GPU samples in a row are busy all along: an evaluation pass sampled every 10 s is no 10 s quiet") {
    const StallConfig c;
    NodeTracker n(c, "n1", 0);
    for (double t = 601; t <= 641; t += 2) n.on_heartbeat(t, t + 0.1);
    n.on_samples(acme::test::sim_gpus(95, 300, 40), 642);
    for (double t = 652; t <= 692; t += 10) n.on_samples(acme::test::sim_gpus(95, 300, 40), t);
    n.on_heartbeat(693, 693.1);
    REQUIRE(n.state().step > 0);
    CHECK(n.state().step < 3);
    // An idle sample between two busy ones: the quiet between them is learned.
    n.on_samples(acme::test::sim_gpus(0, 60, 0), 700);
    n.on_samples(acme::test::sim_gpus(95, 300, 40), 710);
    CHECK(n.state().step >= 10);
}

TEST_CASE("a process asleep on the disk at one read and not at the next may have slept until the next: its quiet starts there") {
    const StallConfig c;
    NodeTracker n(c, "n1", 0);
    n.on_activity({true, 0, 0, true}, 0.5, 700);
    CHECK(n.state().activity_at == 700);
    n.on_activity({true, 0, 0, false}, 0.5, 700.5);
    CHECK(n.state().activity_at == 700.5);
    n.on_activity({true, 0, 0, false}, 0.5, 701);
    CHECK(n.state().activity_at == 700.5);
}

TEST_CASE("log growth over a span in which quick looks saw the heartbeat move counts as of its last touch; else as of the look") {
    const StallConfig c;
    NodeTracker n(c, "n1", 0);
    Probe p;
    p.log_size = 10;
    n.on_probe(p, 630);
    n.on_heartbeat(640, 640.2);
    p.log_size = 20;
    p.heartbeat_mtime = 640;
    n.on_probe(p, 660);
    CHECK(n.state().log_changed_at == 640);
    p.log_size = 30;
    n.on_probe(p, 690);  // no touch since the look at 660: the lines may be as late as this look
    CHECK(n.state().log_changed_at == 690);
    auto off = c;
    off.heartbeat_probe = 0;
    NodeTracker slow(off, "n1", 0);
    p.log_size = 10;
    slow.on_probe(p, 630);
    slow.on_heartbeat(640, 640.2);
    p.log_size = 20;
    slow.on_probe(p, 660);
    CHECK(slow.state().log_changed_at == 660);
}

TEST_CASE("a node busy at its last sample: no verdict, but the window's close is given so the GPUs are sampled then") {
    const StallConfig c;
    NodeState n;
    n.node = "n1";
    n.ts = 1000.5;
    n.pattern = Pattern::busy;
    n.active_at = 1000;
    n.heartbeat_seen = true;
    n.step = 2, n.steps = 50;
    n.activity_seen = true;
    const auto v = judge({n}, {}, 0, 1000.5, c, false);
    CHECK_FALSE(v.stalled);
    CHECK(v.due == doctest::Approx(1000 + 2 * (1 + c.cadence.margin)));
    CHECK(v.paced);
    CHECK_FALSE(judge({n}, {}, 0, 1010, c, false).stalled);  // still busy as last sampled
}
