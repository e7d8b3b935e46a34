#include "evalsched/core/follow_plan.hpp"

#include <fmt/format.h>

namespace acme::evalsched {

std::vector<FollowDecision> plan_follow(const std::vector<FollowedCheckpoint>& complete, const FollowMemory& memory,
                                        const FollowOptions& options) {
    std::vector<FollowedCheckpoint> fresh;
    for (const auto& c : complete)
        if (c.step > memory.last_step) fresh.push_back(c);
    std::vector<FollowDecision> out;
    if (fresh.empty()) return out;
    long long last = memory.last_submitted;
    auto too_close = [&](long long step) { return options.every > 0 && last >= 0 && step < last + options.every; };
    auto every_reason = [&](long long step) {
        return fmt::format("--every {}: step {} is fewer than {} steps after step {}", options.every, step, options.every, last);
    };
    if (!options.keep_up) {
        for (const auto& c : fresh) {
            if (too_close(c.step)) {
                out.push_back({c, false, every_reason(c.step)});
                continue;
            }
            out.push_back({c, true, {}});
            last = c.step;
        }
        return out;
    }
    // --keep-up: nothing is decided while the last evaluation runs; then the newest wins.
    if (memory.evaluating) return out;
    std::size_t newest = fresh.size();
    for (std::size_t i = fresh.size(); i-- > 0;)
        if (!too_close(fresh[i].step)) {
            newest = i;
            break;
        }
    for (std::size_t i = 0; i < fresh.size(); ++i) {
        if (i == newest) out.push_back({fresh[i], true, {}});
        else if (i < newest && newest < fresh.size())
            out.push_back({fresh[i], false, fmt::format("--keep-up: step {} was complete too", fresh[newest].step)});
        else out.push_back({fresh[i], false, every_reason(fresh[i].step)});
    }
    return out;
}

}  // namespace acme::evalsched
