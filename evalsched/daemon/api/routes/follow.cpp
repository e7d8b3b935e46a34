// POST /v1/follows (evalsched follow), GET /v1/follows, POST /v1/follows/<id>/cancel. Creating a
// follow only stores it: the follow watcher's thread reads the directory, as the user, at its
// next round; the routes never touch a user's files from the API's loop.
#include <unistd.h>

#include <fmt/format.h>

#include "evalsched/daemon/follows.hpp"
#include "evalsched/daemon/log.hpp"
#include "evalsched/daemon/api/routes/route.hpp"

namespace acme::evalsched {

Reply route_follow(RouteContext& ctx) {
    // Without its scan helper a follow could only fail every scan: refuse it now, in the words
    // the daemon logged at start, and store nothing. (A stat of root's configured path.)
    if (access(ctx.config.follow_helper.c_str(), X_OK) != 0)
        return error_reply(503, fmt::format("evalschedd's follow_helper {} is not executable: ask an admin to install it "
                                            "(evalschedd(8)); no follow was stored",
                                            printable(ctx.config.follow_helper, 200)));
    FollowRequest req;
    try {
        req = parse_follow(ctx.body);
    } catch (const RequestError& e) {
        return error_reply(400, e.what());
    } catch (const SuiteError& e) {
        return error_reply(400, e.what());
    }
    if (req.submit.suite.datasets.size() > static_cast<std::size_t>(ctx.config.max_datasets))
        return error_reply(400, fmt::format("suite {} has {} datasets, more than max_datasets={} allows per evaluation: split it",
                                            printable(req.submit.suite.name), req.submit.suite.datasets.size(), ctx.config.max_datasets));
    const auto id = create_follow(ctx.db, req, ctx.caller, ctx.now);
    if (!id)
        return error_reply(409, fmt::format("you already follow {} directories, the most one user may: evalsched cancel f<ID> one of them "
                                            "(evalsched follows lists them)",
                                            kMaxFollowsPerUser));
    log_line("follow {} started by {}: {} with suite {}{}{}", *id, ctx.caller.user, printable(req.dir, 200), printable(req.submit.suite.name),
             req.options.every ? fmt::format(", every {} steps", req.options.every) : "", req.options.keep_up ? ", keep-up" : "");
    return json_reply(201, nlohmann::json{{"id", *id},
                                          {"dir", req.dir},
                                          {"name", req.submit.name},
                                          {"every", req.options.every},
                                          {"keep_up", req.options.keep_up},
                                          {"interval_s", ctx.config.follow_interval_s}});
}

Reply route_follows(RouteContext& ctx) { return json_reply(200, follows_json(ctx.db, ctx.caller)); }

Reply route_follow_cancel(RouteContext& ctx) {
    const std::int64_t id = ctx.match.id;
    if (!follow_exists(ctx.db, id, ctx.caller))
        return error_reply(404, fmt::format("follow {} not found (or not yours): see evalsched follows", id));
    if (!cancel_follow(ctx.db, id, ctx.caller, ctx.now))
        return error_reply(409, fmt::format("follow {} was already cancelled", id));
    log_line("follow {} cancelled by {}", id, ctx.caller.user);
    return json_reply(200, nlohmann::json{{"id", id}, {"state", "cancelled"}});
}

}  // namespace acme::evalsched
