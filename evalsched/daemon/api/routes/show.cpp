// GET /v1/evaluations/<id>: one evaluation with its trials, attempts, metric jobs and per-dataset
// progress (evalsched status ID, watch), and what the scheduler thread knows beside the store:
// its forecast and its trouble ("scheduler", sched_status.hpp). Kept until its version or the
// scheduler's generation changes.
#include <fmt/format.h>

#include "evalsched/daemon/api/routes/route.hpp"
#include "evalsched/daemon/views.hpp"

namespace acme::evalsched {

Reply route_show(RouteContext& ctx) {
    const auto version = evaluation_version(ctx.db, ctx.match.id, ctx.caller);
    if (!version) return error_reply(404, no_such_evaluation(ctx.match.id));
    const std::string stamp = fmt::format("{}/{}", *version, ctx.status ? ctx.status->generation() : 0);
    return cached_read(
        ctx, stamp,
        [&]() -> std::optional<nlohmann::json> {
            auto e = evaluation_json(ctx.db, ctx.match.id, ctx.caller);
            if (e && ctx.status) {
                nlohmann::json s = ctx.status->of_evaluation(ctx.match.id);
                // The store's trouble (retries) beside the scheduler's, oldest first.
                for (const auto& t : (*e)["retries"]) s["trouble"].push_back(t);
                (*e)["scheduler"] = std::move(s);
            }
            return e;
        },
        no_such_evaluation(ctx.match.id));
}

}  // namespace acme::evalsched
