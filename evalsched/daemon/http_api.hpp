// The API: HTTP/JSON on a Unix socket through libevent's evhttp. Each request's caller is the
// peer of its connection (SO_PEERCRED), never a field of the request: a user sees and cancels
// only their own evaluations; root and members of admin_group see all. An optional TCP
// listener serves /metrics (Prometheus text) and nothing else.
#pragma once

#include <cstdint>
#include <atomic>
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
    // `cluster_gpus`: the usable GPUs the scheduler last saw (0: not known yet), for sizing
    // new evaluations' trials to the cluster.
    HttpApi(event_base* base, const DaemonConfig& config, store::Database db, std::function<void()> wake,
            const std::atomic<int>* cluster_gpus = nullptr);
    ~HttpApi();
    HttpApi(const HttpApi&) = delete;
    HttpApi& operator=(const HttpApi&) = delete;

    // Throws std::runtime_error naming the socket or address when it cannot listen.
    void listen();

private:
    static void on_request(evhttp_request* req, void* self);
    static void on_metrics(evhttp_request* req, void* self);
    void handle(evhttp_request* req);
    // The kept answer to a read under `key`, or nullptr when there is none for this stamp.
    const std::string* cached(const std::string& key, const std::string& stamp);
    void keep(const std::string& key, const std::string& stamp, const std::string& text);


    event_base* base_;
    DaemonConfig config_;
    store::Database db_;
    std::function<void()> wake_;
    const std::atomic<int>* cluster_gpus_;
    evhttp* http_ = nullptr;
    evhttp* metrics_ = nullptr;
    // Requests are served one at a time on one event loop, and the scheduler thread commits
    // every round, so a read must not cost a whole-store query each time: answers to
    // `status ID` and `report` are kept with the versions of the evaluations they show (the
    // store bumps a version on every change), `status` is assembled from per-evaluation
    // summaries kept the same way, and priors until a prior run is added or pruned.
    static constexpr std::size_t kMaxReplies = 4096;
    std::unordered_map<std::string, std::pair<std::string, std::string>> replies_;  // key -> stamp, text
    SummaryCache summaries_;
    PriorsCache priors_;
};

}  // namespace acme::evalsched
