#include "evalsched/daemon/sched/lifecycle.hpp"

namespace acme::evalsched {
namespace {
constexpr std::string_view kTokenKey = " evalsched-job=";
}  // namespace

std::string job_comment(const std::string& what, const std::string& tag) { return what + std::string(kTokenKey) + tag; }

bool carries_own_token(const slurm::JobView& job) {
    const std::string_view c = job.comment;
    return c.size() > kTokenKey.size() + job.name.size() && c.ends_with(job.name) &&
           c.substr(c.size() - job.name.size() - kTokenKey.size(), kTokenKey.size()) == kTokenKey;
}

TagIndex index_by_tag(const std::vector<slurm::JobView>& jobs) {
    TagIndex by_tag;
    for (const auto& j : jobs)
        if (j.name.starts_with("evalsched-") && carries_own_token(j)) by_tag[j.name].push_back(&j);
    return by_tag;
}

const slurm::JobView* find_tag(const TagIndex& by_tag, const std::string& tag, std::optional<std::uint32_t> uid) {
    auto it = by_tag.find(tag);
    if (it == by_tag.end() || !uid) return nullptr;
    // The newest of the owner's: after a requeue Slurm keeps the id, so there is one.
    const slurm::JobView* best = nullptr;
    for (const slurm::JobView* j : it->second)
        if (j->user_id == *uid && (!best || best->job_id < j->job_id)) best = j;
    return best;
}

}  // namespace acme::evalsched
