// POST /v1/evaluations/<id>/cancel: the store marks it; the scheduler thread (the only one that
// talks to slurmctld) kills its jobs in the round this wakes.
#include <fmt/format.h>

#include "evalsched/daemon/evaluations.hpp"
#include "evalsched/daemon/log.hpp"
#include "evalsched/daemon/api/routes/route.hpp"

namespace acme::evalsched {

Reply route_cancel(RouteContext& ctx) {
    const std::int64_t id = ctx.match.id;
    switch (cancel_evaluation(ctx.db, id, ctx.caller, ctx.now)) {
    case CancelResult::not_found: return error_reply(404, no_such_evaluation(id));
    case CancelResult::already_finished: return error_reply(409, fmt::format("evaluation {} already finished: nothing to cancel", id));
    case CancelResult::cancelled: break;
    }
    log_line("evaluation {} cancelled by {}", id, ctx.caller.user);
    ctx.wake();
    return json_reply(200, nlohmann::json{{"id", id}, {"state", "cancelled"}});
}

}  // namespace acme::evalsched
