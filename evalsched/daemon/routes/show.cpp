// GET /v1/evaluations/<id>: one evaluation with its trials, attempts and metric jobs
// (evalsched status ID), kept until its version changes.
#include "evalsched/daemon/routes/route.hpp"
#include "evalsched/daemon/views.hpp"

namespace acme::evalsched {

Reply route_show(RouteContext& ctx) {
    const auto version = evaluation_version(ctx.db, ctx.match.id, ctx.caller);
    if (!version) return error_reply(404, no_such_evaluation(ctx.match.id));
    return cached_read(
        ctx, std::to_string(*version), [&] { return evaluation_json(ctx.db, ctx.match.id, ctx.caller); }, no_such_evaluation(ctx.match.id));
}

}  // namespace acme::evalsched
