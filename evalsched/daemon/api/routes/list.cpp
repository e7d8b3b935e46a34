// GET /v1/evaluations: the summaries of every evaluation the caller may see (evalsched status).
#include "evalsched/daemon/api/routes/route.hpp"

namespace acme::evalsched {

Reply route_list(RouteContext& ctx) { return Reply{200, ctx.caches.summaries.list_text(ctx.db, ctx.caller) + "\n"}; }

}  // namespace acme::evalsched
