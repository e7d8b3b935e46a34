// The route table and its walk, and what every handler shares: replies, the read cache, one
// not-found line.
#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "evalsched/daemon/api/routes/route.hpp"

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

namespace {

constexpr std::string_view kBadEvaluation = "evaluation id '{}' is not a number: use the ID evalsched status prints";
constexpr std::string_view kBadFollow = "follow id '{}' is not a number: use the ID evalsched follow printed";

// The API, one row per route (evalsched(1) documents each). A new route is its file and a row
// here; submissions go to the submit worker's thread, the rest run on the event loop.
const RouteRow kRoutes[] = {
    {"GET", "/v1/evaluations", &route_list, ""},
    {"POST", "/v1/evaluations", &route_submit, ""},
    {"GET", "/v1/evaluations/{id}", &route_show, kBadEvaluation},
    {"POST", "/v1/evaluations/{id}/cancel", &route_cancel, kBadEvaluation},
    {"GET", "/v1/report/{name}", &route_report, "report: name a run ([A-Za-z0-9._-]) or an evaluation id"},
    {"GET", "/v1/priors", &route_priors, ""},
    {"GET", "/v1/priors/{name}", &route_priors, "priors: name a dataset ([A-Za-z0-9._-])"},
    {"GET", "/v1/health", &route_health, ""},
    {"POST", "/v1/follows", &route_follow, ""},
    {"GET", "/v1/follows", &route_follows, ""},
    {"POST", "/v1/follows/{id}/cancel", &route_follow_cancel, kBadFollow},
};

}  // namespace

std::optional<RouteMatch> match_route(std::string_view method, std::string_view path) {
    if (auto q = path.find('?'); q != std::string_view::npos) path = path.substr(0, q);
    if (path.size() > 1 && path.back() == '/') path.remove_suffix(1);  // "/v1/evaluations/" lists too
    std::optional<RequestError> bad;
    std::size_t bad_segments = 0;  // the complaint of the most specific shape wins: "abc", not "abc/cancel"
    bool shape_elsewhere = false;
    for (const RouteRow& row : kRoutes) {
        try {
            const auto args = match_path(row.pattern, path, row.bad_argument);
            if (!args) continue;
            if (row.method == method) return RouteMatch{&row, args->id, args->arg};
            shape_elsewhere = true;
        } catch (const RequestError& e) {
            const auto segments = static_cast<std::size_t>(std::count(row.pattern.begin(), row.pattern.end(), '/'));
            if (!bad || segments > bad_segments) bad = e, bad_segments = segments;
        }
    }
    if (bad && !shape_elsewhere) throw *bad;
    return std::nullopt;
}

const RouteRow& route_row(std::string_view method, std::string_view pattern) {
    for (const RouteRow& row : kRoutes)
        if (row.method == method && row.pattern == pattern) return row;
    throw std::logic_error(fmt::format("no route {} {}", method, pattern));
}

Reply cached_read(RouteContext& ctx, const std::string& stamp, const std::function<std::optional<json>()>& build,
                  const std::string& not_found) {
    const std::string key = fmt::format("{} {}\x1f{}\x1f{}\x1f{}", ctx.match.row->method, ctx.match.row->pattern, ctx.match.id, ctx.match.arg,
                                        ctx.caller.admin ? std::string("*") : std::to_string(ctx.caller.uid));
    if (const std::string* hit = ctx.caches.replies.find(key, stamp)) return Reply{200, *hit};
    auto body = build();
    if (!body) return error_reply(404, not_found);
    Reply r{200, body_text(*body)};
    ctx.caches.replies.keep(key, stamp, r.text);
    return r;
}

}  // namespace acme::evalsched
