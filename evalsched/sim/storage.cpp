#include "evalsched/sim/storage.hpp"

#include <algorithm>

namespace acme::evalsched::sim {

double Storage::read(double now, int node, double bytes) {
    std::erase_if(flows_, [&](const Flow& f) { return f.end <= now; });
    const auto on_node = std::count_if(flows_.begin(), flows_.end(), [&](const Flow& f) { return f.node == node; });
    const double share = std::min(nic_ / static_cast<double>(on_node + 1), total_ / static_cast<double>(flows_.size() + 1));
    const double duration = bytes / share;
    flows_.push_back({node, now + duration});
    bytes_ += bytes;
    return duration;
}

}  // namespace acme::evalsched::sim
