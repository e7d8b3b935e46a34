#include "spank/faultguard/core/publish_pacing.hpp"

#include <algorithm>
#include <cmath>

namespace acme::faultguard {

PublishPacing publish_pacing(const std::vector<std::string>& expected, const std::string& node,
                             double base_budget_s, double max_turn_s, double since_end_s) {
    const std::size_t n = std::max<std::size_t>(expected.size(), 1);
    const auto at = std::find(expected.begin(), expected.end(), node);
    const std::size_t place = at == expected.end() ? 0 : static_cast<std::size_t>(at - expected.begin());
    const double slot = std::min(kWriteSlotSeconds, std::max(0.0, max_turn_s) / static_cast<double>(n));
    PublishPacing p;
    p.turn_s = slot * static_cast<double>(n);
    p.first_delay_s = slot * static_cast<double>(place);
    p.turns_over_s = p.turn_s;
    // A job of one node has no one to take turns with: it writes at once, as it must when an
    // admin requeued the job (the next run's row, made moments after the epilog, takes every
    // later write; t-gpuacct-requeued lost its first run's record to a 3 s wait).
    if (since_end_s >= 0 && n > 1) {
        // One clock for every node: the turns start kSettleSeconds after the job's end,
        // whenever each node's epilog ended.
        p.first_delay_s = std::max(0.0, kSettleSeconds + p.first_delay_s - since_end_s);
        p.turns_over_s = std::max(0.0, kSettleSeconds + p.turn_s - since_end_s);
    }
    // At least the 0.3-1.2 s a pair of nodes has always waited; a large job spreads its
    // rewrites over half its turn, so they do not meet again.
    p.retry_spread_s = std::max(0.9, p.turn_s / 2);
    p.budget_s = base_budget_s + 3 * p.turn_s + (since_end_s >= 0 && n > 1 ? kSettleSeconds : 0);
    return p;
}

double pacing_end(double slurmctld_end, double now) { return slurmctld_end > 0 ? std::min(slurmctld_end, now) : 0.0; }

unsigned publish_hard_stop_s(const PublishPacing& pacing) {
    return static_cast<unsigned>(std::ceil(std::max(0.0, pacing.budget_s) + 3 * kSlurmdbdCallSeconds));
}

}  // namespace acme::faultguard
