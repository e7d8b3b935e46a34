// The API: HTTP/JSON on a Unix socket through libevent's evhttp. Each request's caller is the
// peer of its connection (SO_PEERCRED), never a field of the request: a user sees and cancels
// only their own evaluations; root and members of admin_group see all. Each route's handler is
// a file of its own (routes/); this class owns the sockets. Submissions, the one heavy route,
// are built on a worker thread (submit_worker.hpp) so the loop keeps answering reads meanwhile.
// An optional TCP listener serves /metrics (Prometheus text) and nothing else.
#pragma once

#include <cstdint>
#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "common/store/database.hpp"
#include "evalsched/daemon/config.hpp"
#include "evalsched/daemon/caches.hpp"
#include "evalsched/daemon/api/conn_guard.hpp"
#include "evalsched/daemon/sched_status.hpp"
#include "evalsched/daemon/api/submit_worker.hpp"

struct bufferevent;
struct event;
struct event_base;
struct evconnlistener;
struct evhttp;
struct evhttp_request;

namespace acme::evalsched {

class HttpApi {
public:
    // `wake` asks the scheduler thread for a round now (after a submission or cancellation).
    // `cluster_gpus`: the usable GPUs the scheduler last saw (0: not known yet), for sizing
    // new evaluations' trials to the cluster. `submit_db` is the submission worker's own
    // connection (SQLite connections are not shared between threads).
    HttpApi(event_base* base, const DaemonConfig& config, store::Database db, store::Database submit_db,
            std::function<void()> wake, const std::atomic<int>* cluster_gpus = nullptr, const SchedulerStatus* status = nullptr);
    ~HttpApi();
    HttpApi(const HttpApi&) = delete;
    HttpApi& operator=(const HttpApi&) = delete;

    // Throws std::runtime_error naming the socket or address when it cannot listen.
    void listen();

private:
    static void on_request(evhttp_request* req, void* self);
    static void on_metrics(evhttp_request* req, void* self);
    // Authenticates the caller, matches the route and hands the request to its handler
    // (routes/route.hpp); nothing else.
    void handle(evhttp_request* req);
    // Connection limits (conn_guard.hpp): each new connection's bufferevent is held until its
    // descriptor is known (right after evhttp's accept), then admitted or refused.
    static bufferevent* on_new_connection(event_base* base, void* self);
    static void on_check(int, short, void* self);
    static void on_accept_error(evconnlistener* listener, void* self);
    static void on_resume(int, short, void* self);
    // Admits or refuses the connections accepted since the last call; true when `fd` was refused.
    bool check_new(int fd = -1);

    std::vector<bufferevent*> pending_;
    ConnectionGuard guard_;
    LogLimiter refused_log_, accept_log_, failed_log_;
    event* check_event_ = nullptr;   // runs check_new soon after an accept, and sweeps deadlines
    event* resume_event_ = nullptr;  // re-enables the listener after accept(2) failed
    evconnlistener* listener_ = nullptr;

    event_base* base_;
    DaemonConfig config_;
    store::Database db_;
    std::function<void()> wake_;
    const std::atomic<int>* cluster_gpus_;
    const SchedulerStatus* status_;
    evhttp* http_ = nullptr;
    evhttp* metrics_ = nullptr;
    ApiCaches caches_;
    std::unique_ptr<SubmitWorker> submitter_;
};

}  // namespace acme::evalsched
