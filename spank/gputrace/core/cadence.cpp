#include "spank/gputrace/core/cadence.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace acme::telemetry {

void Cadence::observe(double sign, double sign_from, double step, double learn_from, bool continued) {
    if (step > last_step_) {
        if (last_step_ >= learn_from) ++gaps_;
        last_step_ = step;
    }
    if (sign <= last_) return;
    // A gap counts when the earliest it may have begun is past the warm-up: the warm-up's looks are
    // coarse (stall_probe), and a gap reaching back into them is the looks' pace, not the job's.
    // A continued sign never lengthens the quiet learned; it teaches one only where none is yet
    // (a job busy at every sample shows no quiet shorter than the samples).
    if (last_from_ >= learn_from && (!continued || longest_ <= 0)) longest_ = std::max(longest_, sign - last_from_);
    last_ = sign;
    last_from_ = std::min(sign, sign_from);
}

double Cadence::trusted_step(const CadenceConfig& c) const {
    return c.k > 0 && gaps_ >= c.steps ? longest_ : 0;
}

StallWindow stall_window(double ceiling, std::string_view ceiling_name, double step, long long steps,
                         const CadenceConfig& c, bool activity_seen) {
    const std::string fixed = fmt::format("the fixed {} window", ceiling_name);
    if (step <= 0 || c.k <= 0) return {ceiling, false, fixed};
    if (activity_seen) {
        // No floor and no k: a save or an evaluation the job has not shown yet moves bytes, CPU or
        // the GPUs; a quiet longer than any the job has shown, by the margin, is the hang.
        const std::string pace = fmt::format("the job's longest quiet of {:.0f} s seen over {} steps and {:g} % more",
                                             step, steps, c.margin * 100);
        const double quiet = step * (1 + c.margin);
        if (quiet >= ceiling) return {ceiling, false, fmt::format("{}; {} is longer", fixed, pace)};
        return {quiet, true, pace + ", its processes idle too"};
    }
    const std::string pace =
        fmt::format("{:g}x the job's longest step of {:.0f} s seen over {} steps", c.k, step, steps);
    const double paced = c.k * step;
    if (paced >= ceiling) return {ceiling, false, fmt::format("{}; {} is longer", fixed, pace)};
    // The floor is the pause on top of a step: a save starts after a step's last sign, and the
    // next sign comes a step after it ends.
    const double floored = step + c.floor;
    if (paced < floored) {
        // A floor past the ceiling (windows scaled down for a test) leaves the ceiling.
        if (floored >= ceiling) return {ceiling, false, fmt::format("{}; {} is shorter", fixed, pace)};
        return {floored, true, fmt::format("a step and the {:g} s floor; {} is shorter", c.floor, pace)};
    }
    return {paced, true, pace};
}

}  // namespace acme::telemetry
