// GET /v1/health: whether the daemon answers, and who it takes the caller for.
#include "evalsched/daemon/api/routes/route.hpp"

namespace acme::evalsched {

Reply route_health(RouteContext& ctx) {
    return json_reply(200, nlohmann::json{{"ok", true}, {"user", ctx.caller.user}, {"admin", ctx.caller.admin}});
}

}  // namespace acme::evalsched
