// The API: HTTP/JSON on a Unix socket through libevent's evhttp. Each request's caller is the
// peer of its connection (SO_PEERCRED), never a field of the request: a user sees and cancels
// only their own evaluations; root and members of admin_group see all. An optional TCP
// listener serves /metrics (Prometheus text) and nothing else.
#pragma once

#include <functional>
#include <string>

#include "common/store/database.hpp"
#include "evalsched/daemon/config.hpp"

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

    event_base* base_;
    DaemonConfig config_;
    store::Database db_;
    std::function<void()> wake_;
    evhttp* http_ = nullptr;
    evhttp* metrics_ = nullptr;
};

}  // namespace acme::evalsched
