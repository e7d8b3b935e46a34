// Stall windows at the job's own pace. The fixed windows (stall_spin_window, stall_idle_window)
// must fit the slowest healthy job, so a job that heartbeats every 2 s waits as long as one that
// steps once a minute. A node learns the longest gap it has seen between two signs of progress
// (a busy GPU sample, a heartbeat touch, the log or a checkpoint growing), and once it has seen
// enough of them the verdict comes after k times that gap instead: never sooner than that gap and
// a floor more (a checkpoint save or evaluation pass the job has not shown yet must not look like
// a hang: a verdict can requeue the job, so a late verdict is cheaper than a false one) and never
// later than the fixed window.
// What tells a long healthy pause from a hang is what the job's processes do in it (job_activity.hpp):
// a checkpoint save writes, a data-loader wait reads or waits on the disk, host-side work (an
// upload, a recompilation) burns CPU while the GPUs idle; a hung collective spins the GPUs and
// moves no bytes, a deadlock sleeps. Where the sampler reads the job's processes, the paced window
// counts only the quiet in which nothing of that moved either, and needs the longest such quiet
// the job has shown and a margin more (not k times it, and no floor: a quiet longer than any the
// job has shown, with nothing of it moving, is the strong case); where it cannot, k times the
// step and the floor stand in for the unseen pause. Pure functions of the times they are given, so simulated clocks test
// them (tests/unit/telemetry_cadence_test.cpp) and bench them (tests/bench/stall_cadence_bench.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace acme::telemetry {

// The admin's cadence keys (gputrace plugstack stall_cadence_*, gputrace(8)).
struct CadenceConfig {
    // Where the job's processes are not read: the verdict after k times the longest gap seen,
    // with the floor. 0: the fixed windows only (no verdict at the job's pace anywhere).
    double k = 3;
    // Where they are read and nothing of them moved: the quiet needed is the longest quiet the job
    // has shown, and this share of it more (step-time jitter, and where in a look's span the last
    // activity fell). Not k times: a job that does nothing a look can see (no I/O, no CPU, no disk
    // wait, no busy GPU, no step) for longer than it ever has is the strong case. 2 (three times
    // the quiet): a collective slowed by a congested link shows nothing a look reads, and at 0.25
    // over half the bench's jobs with such stragglers were called (cancelled, with --auto-recover
    // requeued); at 2 about 1 %, for a verdict a few steps later.
    double margin = 2;
    // s past a step: never a verdict sooner. A first checkpoint save the sampler cannot see idles
    // the GPUs for minutes, and a verdict signals (USR1 ends a job that does not catch it) and,
    // with --auto-recover, requeues: 600 s, the warm-up's length. It also leaves the 300 s spin
    // window as it is unless a site lowers it.
    double floor = 600;
    long long steps = 20;  // gaps seen after the warm-up before the cadence is trusted
    // What counts as the job's processes doing something (job_activity.hpp), per second of a
    // look: bytes read or written (a save writes MB/s; a monitoring thread's /proc reads or a
    // rendezvous keep-alive stay far below), and CPU seconds while no GPU of the node spins (a
    // host thread spin-waits on a hung collective, so CPU means nothing then; a deadlock sleeps).
    double io = 65536;
    double cpu = 0.25;
    // Off: the job's processes are not read (a site that may not look, a sampler without root):
    // the floor guards every paced window.
    bool activity = true;
    // Where every node of the job reads its network ports (nic_traffic.hpp) and they were seen to
    // carry the job's steps, and none moved (below `nic_bytes` a second, no port_xmit_wait) over the
    // quiet: the quiet needed is the longest the job has shown and `nic_margin` of it more, not
    // `margin`. A collective slowed by a congested link moves bytes there, a hung one none; the
    // margin was wide for the first. Off: the ports are not read (the margin alone, as before).
    bool nic = true;
    double nic_bytes = 1048576;  // bytes/s: a subnet manager's MADs, NCCL's RAS and a TCPStore's keep-alives stay below
    double nic_margin = 0.25;
    // s: never a verdict on still ports sooner. A lost packet stalls an RDMA queue pair for one
    // retransmission timeout (4.096 us x 2^NCCL_IB_TIMEOUT: 4.3 s at NCCL's default 20), with
    // every port of a slow but alive collective still meanwhile: 5 s spares one. The bench over
    // four seeds: lossy-link slow collectives called 47 of 2400 at 5 s, 42 at 10 s (33 with the
    // ports off); a 2 s job's hang p95 3.1-3.2 steps at 5 s, 5.5-5.7 at 10 s, then read at the
    // margin's pace (NodeTracker::process_interval); at the ports' pace 2.6-2.8 at 5 s.
    double nic_floor = 5;
    // Netdevs and RDMA devices left out of the ports' evidence, by name or fnmatch glob
    // (nic_traffic.hpp, parse_nic_ignore): a management Ethernet that always carries more than
    // nic_bytes keeps its node's ports moving, and the faster verdict off there. Empty by default:
    // no name is a management port on every site, and a device the job's collectives take (NCCL
    // over sockets, NCCL_SOCKET_IFNAME) left out could read a slow collective as still ports.
    std::vector<std::string> nic_ignore;
};

// One node's gaps between signs of progress. A gap counts only when it starts after the job's
// warm-up (loading and compiling are not the job's pace). The longest gap only grows: a long
// checkpoint pause, once the job came out of it, is part of the job's pace for the rest of the run.
// The pace is trusted after enough of the job's own steps (its log, heartbeat or checkpoint moving),
// not after enough signs of any kind: a second of busy GPU samples in an evaluation pass, or a
// look at a data-loader wait's reads, is not a step, and twenty of them show none of the job's
// quiet between steps.
class Cadence {
public:
    explicit Cadence(double job_start) : last_(job_start), last_from_(job_start), last_step_(job_start) {}
    // `sign`: the node's newest sign of progress or of its processes' activity (a time; older or
    // equal ones are ignored), `sign_from`: the earliest it may have happened (a log that grew,
    // bytes that moved, are seen at a look: they happened since the look before); `step`: its
    // newest step (log, heartbeat, checkpoint); `learn_from`: when the warm-up ends. A gap is
    // counted from the earliest its first sign may have been to the latest its second was: never
    // shorter than the quiet was, wherever in a look's span its edges fell, so a quiet as long
    // seen again at another phase of the looks is not longer than the one learned.
    // `continued`: the sign is a busy GPU sample after a busy one, with no sample between that
    // said otherwise: the GPUs are taken as busy all along (an evaluation pass sampled every 10 s,
    // NVML's utilisation being itself a share of the last sample period), so no quiet ends here
    // (unless none was learned yet: the samples' spacing is then the finest quiet known).
    void observe(double sign, double sign_from, double step, double learn_from, bool continued = false);
    double longest() const { return longest_; }
    long long gaps() const { return gaps_; }  // steps seen after the warm-up
    // The longest gap when enough gaps were seen to trust it; 0: no cadence (the fixed windows).
    double trusted_step(const CadenceConfig& c) const;

private:
    double last_, last_from_, last_step_;
    double longest_ = 0;
    long long gaps_ = 0;
};

struct StallWindow {
    double seconds = 0;
    bool paced = false;  // at the job's pace: counted over the quiet in which the processes were idle too
    std::string why;  // for the verdict's evidence: "3x the job's longest step of 10 s seen over 40 steps"
};

// The quiet a verdict needs: `ceiling` (the fixed window, named `ceiling_name`: "spin", "idle")
// without a cadence (`step` 0), else k x step within [step + floor, ceiling]; `steps`: gaps seen.
// `activity_seen`: the job's processes are read on every node, so a pause that does something is
// seen as such: `step` is then the job's longest quiet (nothing moving), and the verdict needs
// that and the margin more, no floor, within the ceiling.
StallWindow stall_window(double ceiling, std::string_view ceiling_name, double step, long long steps,
                         const CadenceConfig& c, bool activity_seen = false);

}  // namespace acme::telemetry
