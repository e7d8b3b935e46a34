// The API's routes as tmux has its commands: one handler per route, each in its own file
// (routes/<route>.cpp), and one table of {method, path pattern, handler} rows
// (routes/table.cpp) that matching walks. HttpApi::handle only authenticates the caller,
// matches the route and hands it here; a handler reads and writes the store, never a socket,
// so it answers a Reply the event loop sends (and tests read).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/store/database.hpp"
#include "evalsched/daemon/api/api_request.hpp"
#include "evalsched/daemon/caches.hpp"
#include "evalsched/daemon/config.hpp"
#include "evalsched/daemon/sched_status.hpp"
#include "evalsched/store/rows.hpp"

namespace acme::evalsched {

// An answer: the HTTP status and the JSON body, newline-terminated.
struct Reply {
    int code = 200;
    std::string text;
};
Reply json_reply(int code, const nlohmann::json& body);
Reply error_reply(int code, const std::string& message);
// The text of a JSON body as every reply writes it (invalid UTF-8 replaced, not refused).
std::string body_text(const nlohmann::json& body);

struct RouteContext;
using RouteHandler = Reply (*)(RouteContext&);

// One route: a row of the table. bad_argument is the 400's text for a path of this shape whose
// {id} or {name} is not one ("{}" stands for what was sent).
struct RouteRow {
    std::string_view method;   // GET or POST
    std::string_view pattern;  // "/v1/evaluations/{id}/cancel"
    RouteHandler handler;
    std::string_view bad_argument;
};

struct RouteMatch {
    const RouteRow* row = nullptr;
    std::int64_t id = 0;   // the path's {id}
    std::string arg;       // the path's {name}
};

// Walks the table. nullopt: no such route (404); RequestError: a route's shape with a bad
// argument (400), unless another route of that shape takes the argument (then 404: the
// method is wrong, not the argument).
std::optional<RouteMatch> match_route(std::string_view method, std::string_view path);

// The row for a method and pattern as the table spells them (submissions that do not come
// through a request, e.g. a follow's, use submit's); std::logic_error when there is none.
const RouteRow& route_row(std::string_view method, std::string_view pattern);

// Everything one request's handler may use; the caller is the connection's peer (SO_PEERCRED).
struct RouteContext {
    store::Database& db;
    const DaemonConfig& config;
    const Caller& caller;
    const RouteMatch& match;
    std::string_view body;               // the request body (submit reads it)
    ApiCaches& caches;
    const std::function<void()>& wake;   // asks the scheduler thread for a round now
    int cluster_gpus = 0;                // usable GPUs the scheduler last saw; 0: not known yet
    double now = 0;                      // Unix seconds
    const SchedulerStatus* status = nullptr;  // the scheduler's trouble and forecasts; null: none
};

// One per route (routes/<name>.cpp).
Reply route_health(RouteContext& ctx);
Reply route_list(RouteContext& ctx);
Reply route_show(RouteContext& ctx);
Reply route_cancel(RouteContext& ctx);
Reply route_report(RouteContext& ctx);
Reply route_priors(RouteContext& ctx);
Reply route_submit(RouteContext& ctx);
Reply route_follow(RouteContext& ctx);         // routes/follow.cpp
Reply route_follows(RouteContext& ctx);
Reply route_follow_cancel(RouteContext& ctx);

// A read's answer is kept under what decides it (route, argument, admin or uid) and reused
// while the versions of the evaluations it shows are unchanged (the stamp): the kept text, or
// the answer `build` makes (nullopt: 404 with `not_found`), kept for next time.
Reply cached_read(RouteContext& ctx, const std::string& stamp, const std::function<std::optional<nlohmann::json>()>& build,
                  const std::string& not_found);

// The evaluation a show or cancel names could not be found, or is another user's.
std::string no_such_evaluation(std::int64_t id);

// /metrics (Prometheus text), served on the optional TCP listener.
std::string metrics_text(store::Database& db);

}  // namespace acme::evalsched
