#include "evalsched/daemon/lifecycle.hpp"

namespace acme::evalsched {

TagIndex index_by_tag(const std::vector<slurm::JobView>& jobs) {
    // The newest job of a tag wins: after a requeue Slurm keeps the id, so there is one.
    TagIndex by_tag;
    for (const auto& j : jobs)
        if (j.name.starts_with("evalsched-")) {
            auto& slot = by_tag[j.name];
            if (!slot || slot->job_id < j.job_id) slot = &j;
        }
    return by_tag;
}

const slurm::JobView* find_tag(const TagIndex& by_tag, const std::string& tag) {
    auto it = by_tag.find(tag);
    return it == by_tag.end() ? nullptr : it->second;
}

}  // namespace acme::evalsched
