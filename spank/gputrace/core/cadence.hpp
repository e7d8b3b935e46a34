// Stall windows at the job's own pace. The fixed windows (stall_spin_window, stall_idle_window)
// must fit the slowest healthy job, so a job that heartbeats every 2 s waits as long as one that
// steps once a minute. A node learns the longest gap it has seen between two signs of progress
// (a busy GPU sample, a heartbeat touch, the log or a checkpoint growing), and once it has seen
// enough of them the verdict comes after k times that gap instead: never sooner than that gap and
// a floor more (a checkpoint save or evaluation pass the job has not shown yet must not look like
// a hang: a verdict can requeue the job, so a late verdict is cheaper than a false one) and never
// later than the fixed window. Pure functions of the times they are given, so simulated clocks test
// them (tests/unit/telemetry_cadence_test.cpp) and bench them (tests/bench/stall_cadence_bench.cpp).
#pragma once

#include <string>
#include <string_view>

namespace acme::telemetry {

// The admin's cadence keys (gputrace plugstack stall_cadence_*, gputrace(8)).
struct CadenceConfig {
    double k = 3;        // the verdict after k times the longest gap seen; 0: fixed windows only
    // s past a step: never a verdict sooner. A first checkpoint save the sampler cannot see idles
    // the GPUs for minutes, and a verdict signals (USR1 ends a job that does not catch it) and,
    // with --auto-recover, requeues: 600 s, the warm-up's length. It also leaves the 300 s spin
    // window as it is unless a site lowers it.
    double floor = 600;
    long long steps = 20;  // gaps seen after the warm-up before the cadence is trusted
};

// One node's gaps between signs of progress. A gap counts only when it starts after the job's
// warm-up (loading and compiling are not the job's pace). The longest gap only grows: a long
// checkpoint pause, once the job came out of it, is part of the job's pace for the rest of the run.
class Cadence {
public:
    explicit Cadence(double job_start) : last_(job_start) {}
    // `progress`: the node's newest sign of progress (a time; older or equal ones are ignored);
    // `learn_from`: when the warm-up ends.
    void observe(double progress, double learn_from);
    double longest() const { return longest_; }
    long long gaps() const { return gaps_; }
    // The longest gap when enough gaps were seen to trust it; 0: no cadence (the fixed windows).
    double trusted_step(const CadenceConfig& c) const;

private:
    double last_;
    double longest_ = 0;
    long long gaps_ = 0;
};

struct StallWindow {
    double seconds = 0;
    std::string why;  // for the verdict's evidence: "3x the job's longest step of 10 s seen over 40 steps"
};

// The quiet a verdict needs: `ceiling` (the fixed window, named `ceiling_name`: "spin", "idle")
// without a cadence (`step` 0), else k x step within [step + floor, ceiling]; `steps`: gaps seen.
StallWindow stall_window(double ceiling, std::string_view ceiling_name, double step, long long steps,
                         const CadenceConfig& c);

}  // namespace acme::telemetry
