// GET /v1/priors[/<dataset>]: what the scheduler expects each dataset to take, from past runs.
#include "evalsched/daemon/api/routes/route.hpp"

namespace acme::evalsched {

Reply route_priors(RouteContext& ctx) { return json_reply(200, ctx.caches.priors.get(ctx.db, ctx.match.arg)); }

}  // namespace acme::evalsched
