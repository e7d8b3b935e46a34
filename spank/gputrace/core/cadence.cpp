#include "spank/gputrace/core/cadence.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace acme::telemetry {

void Cadence::observe(double progress, double learn_from) {
    if (progress <= last_) return;
    if (last_ >= learn_from) {
        longest_ = std::max(longest_, progress - last_);
        ++gaps_;
    }
    last_ = progress;
}

double Cadence::trusted_step(const CadenceConfig& c) const {
    return c.k > 0 && gaps_ >= c.steps ? longest_ : 0;
}

StallWindow stall_window(double ceiling, std::string_view ceiling_name, double step, long long steps,
                         const CadenceConfig& c) {
    const std::string fixed = fmt::format("the fixed {} window", ceiling_name);
    if (step <= 0 || c.k <= 0) return {ceiling, fixed};
    const std::string pace =
        fmt::format("{:g}x the job's longest step of {:.0f} s seen over {} steps", c.k, step, steps);
    const double paced = c.k * step;
    if (paced >= ceiling) return {ceiling, fmt::format("{}; {} is longer", fixed, pace)};
    // The floor is the pause on top of a step: a save starts after a step's last sign, and the
    // next sign comes a step after it ends.
    const double floored = step + c.floor;
    if (paced < floored) {
        // A floor past the ceiling (windows scaled down for a test) leaves the ceiling.
        if (floored >= ceiling) return {ceiling, fmt::format("{}; {} is shorter", fixed, pace)};
        return {floored, fmt::format("a step and the {:g} s floor; {} is shorter", c.floor, pace)};
    }
    return {paced, pace};
}

}  // namespace acme::telemetry
