#include "evalsched/daemon/follows.hpp"

namespace acme::evalsched {

std::optional<std::int64_t> create_follow(store::Database& db, const FollowRequest& req, const Caller& caller, double now) {
    return insert_follow(db,
                         NewFollow{req.dir, req.submit.name, req.suite_text, req.submit.suite_file, req.submit.priority, req.submit.params_b,
                                   req.options.every, req.options.keep_up, req.submit.environment},
                         caller, now);
}

FollowMemory follow_memory(store::Database& db, std::int64_t follow) {
    const FollowHistory h = follow_history(db, follow);
    return FollowMemory{h.last_step, h.last_submitted, h.evaluating};
}

FollowOptions follow_options(const FollowRow& f) { return FollowOptions{f.every, f.keep_up}; }

void record_decision(store::Database& db, std::int64_t follow, const FollowDecision& d, std::optional<std::int64_t> evaluation, double now) {
    record_checkpoint(db, follow, d.checkpoint.step, d.checkpoint.path, evaluation, d.reason, now);
}

}  // namespace acme::evalsched
