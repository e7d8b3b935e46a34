// GET /v1/report/<name or id>: scores of every checkpoint of a run (datasets x checkpoints),
// kept until one of the evaluations it covers changes.
#include <fmt/format.h>

#include "evalsched/daemon/api/routes/route.hpp"
#include "evalsched/daemon/views.hpp"

namespace acme::evalsched {

Reply route_report(RouteContext& ctx) {
    const std::string not_found = fmt::format("no evaluation named {} that you can see: see evalsched status", ctx.match.arg);
    const std::string stamp = report_versions(ctx.db, ctx.match.arg, ctx.caller);
    if (stamp.empty()) return error_reply(404, not_found);
    return cached_read(ctx, stamp, [&] { return report_json(ctx.db, ctx.match.arg, ctx.caller); }, not_found);
}

}  // namespace acme::evalsched
