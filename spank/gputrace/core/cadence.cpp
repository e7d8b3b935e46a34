#include "spank/gputrace/core/cadence.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "spank/gputrace/core/nic_traffic.hpp"

namespace acme::telemetry {

// stall_cadence_nic_ignore's text (declared in nic_traffic.hpp): here, with the cadence keys,
// because the plugin (gputrace_impl, in slurmd) parses the key and links this file, never the
// sysfs reader; nic_ignored, which only the sampler calls, stays in nic_traffic.cpp.
std::optional<std::vector<std::string>> parse_nic_ignore(std::string_view text) {
    constexpr std::size_t kMost = 16, kLongest = 64;
    std::vector<std::string> out;
    if (text.empty()) return out;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= text.size(); ++i) {
        if (i < text.size() && text[i] != ',') continue;
        const std::string_view entry = text.substr(start, i - start);
        start = i + 1;
        if (entry.empty() || entry.size() > kLongest || out.size() >= kMost) return std::nullopt;
        for (const char ch : entry)
            if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                  std::string_view("._-:@*?[]!^").find(ch) != std::string_view::npos))
                return std::nullopt;
        out.emplace_back(entry);
    }
    return out;
}

std::string format_nic_ignore(const std::vector<std::string>& ignore) {
    std::string out;
    for (const auto& e : ignore) out += (out.empty() ? "" : ",") + e;
    return out;
}

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
