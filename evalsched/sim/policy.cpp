#include "evalsched/sim/policy.hpp"

#include <fmt/format.h>

namespace acme::evalsched::sim {

std::string piece_key(const std::string& checkpoint, const std::string& dataset, int index, int count) {
    return fmt::format("{}|{}|{}|{}", checkpoint, dataset, index, count);
}

std::unique_ptr<Policy> make_policy(const std::string& name) {
    if (name == "sequential") return make_sequential();
    if (name == "opencompass") return make_opencompass(false);
    if (name == "opencompass-time") return make_opencompass(true);
    if (name == "evalsched") return make_evalsched();
    if (name == "evalsched-trials") return make_evalsched_trials();
    return nullptr;
}

}  // namespace acme::evalsched::sim
