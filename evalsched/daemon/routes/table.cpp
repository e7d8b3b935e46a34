// The route table, and what every handler shares: replies, the read cache, one not-found line.
#include <stdexcept>

#include <fmt/format.h>

#include "evalsched/daemon/routes/route.hpp"

namespace acme::evalsched {

using nlohmann::json;

std::string body_text(const json& body) { return body.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"; }

Reply json_reply(int code, const json& body) { return Reply{code, body_text(body)}; }

// Every error is one line a terminal prints as text: whatever part of it quotes a request
// (a suite's key, a name) has its control characters escaped, and the whole is bounded.
Reply error_reply(int code, const std::string& message) { return json_reply(code, json{{"error", printable(message, 1000)}}); }

std::string no_such_evaluation(std::int64_t id) {
    return fmt::format("evaluation {} not found (or not yours): see evalsched status", id);
}

RouteHandler handler_for(Route route) {
    switch (route) {
    case Route::list: return &route_list;
    case Route::submit: return &route_submit;
    case Route::show: return &route_show;
    case Route::cancel: return &route_cancel;
    case Route::report: return &route_report;
    case Route::priors: return &route_priors;
    case Route::health: return &route_health;
    case Route::follow: return &route_follow;
    case Route::follows: return &route_follows;
    case Route::follow_cancel: return &route_follow_cancel;
    }
    // match_route makes only the routes above; anything else is this build's bug.
    throw std::logic_error(fmt::format("no handler for route {}", static_cast<int>(route)));
}

Reply cached_read(RouteContext& ctx, const std::string& stamp, const std::function<std::optional<json>()>& build,
                  const std::string& not_found) {
    const std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}", static_cast<int>(ctx.match.route), ctx.match.id, ctx.match.arg,
                                        ctx.caller.admin ? std::string("*") : std::to_string(ctx.caller.uid));
    if (const std::string* hit = ctx.caches.replies.find(key, stamp)) return Reply{200, *hit};
    auto body = build();
    if (!body) return error_reply(404, not_found);
    Reply r{200, body_text(*body)};
    ctx.caches.replies.keep(key, stamp, r.text);
    return r;
}

}  // namespace acme::evalsched
