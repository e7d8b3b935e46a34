// The API: HTTP/JSON on a Unix socket through libevent's evhttp. Each request's caller is the
// peer of its connection (SO_PEERCRED), never a field of the request: a user sees and cancels
// only their own evaluations; root and members of admin_group see all. An optional TCP
// listener serves /metrics (Prometheus text) and nothing else.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>

#include "common/store/database.hpp"
#include "evalsched/daemon/config.hpp"
#include "evalsched/daemon/state.hpp"

struct event_base;
struct evhttp;
struct evhttp_request;

namespace acme::evalsched {

class HttpApi {
public:
    // `wake` asks the scheduler thread for a round now (after a submission or cancellation).
    HttpApi(event_base* base, const DaemonConfig& config, store::Database db, std::function<void()> wake);
    ~HttpApi();
    HttpApi(const HttpApi&) = delete;
    HttpApi& operator=(const HttpApi&) = delete;

    // Throws std::runtime_error naming the socket or address when it cannot listen.
    void listen();

private:
    static void on_request(evhttp_request* req, void* self);
    static void on_metrics(evhttp_request* req, void* self);
    void handle(evhttp_request* req);
    // The cached answer to a read, or nullptr; drops every answer once the database changed.
    const std::string* cached(const std::string& key);


    event_base* base_;
    DaemonConfig config_;
    store::Database db_;
    std::function<void()> wake_;
    evhttp* http_ = nullptr;
    evhttp* metrics_ = nullptr;
    // Answers to GET reads (by route, argument and what the caller may see), kept while the
    // database is unchanged: PRAGMA data_version moves when another connection (the scheduler
    // thread) commits, total_changes() when this one does. Requests are served one at a time
    // on one event loop, so a repeated whole-store read must not cost a whole-store query.
    std::pair<std::int64_t, std::int64_t> version_{-1, -1};
    std::unordered_map<std::string, std::string> replies_;
    PriorsCache priors_;
};

}  // namespace acme::evalsched
