// Submissions are built off the event loop. POST /v1/evaluations parses a suite of up to 2 MiB,
// cuts it into trials (evalsched/core trials_for_submission) and writes them in one SQLite
// transaction: work that, on the loop, would stall every other caller's list and show. The
// loop hands the request here; this thread runs the submit route on its own connection and
// hands the Reply back through a pipe the loop watches, and the loop sends it. The client sees
// the same 201 with the created evaluation, as before.
//
// A bounded queue: past `max_queued` waiting submissions, or past a quarter of them from the
// same uid, a caller is told to retry (503), so a flood of submissions cannot grow the daemon's
// memory without limit, nor one user's flood keep everyone else's out.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "common/store/database.hpp"
#include "evalsched/daemon/api/routes/route.hpp"
#include "evalsched/daemon/config.hpp"
#include "evalsched/store/rows.hpp"

struct event_base;
struct event;

namespace acme::evalsched {

class SubmitWorker {
public:
    // `token` identifies a request to `deliver`, which the loop thread calls with its Reply.
    using Deliver = std::function<void(void* token, const Reply& reply)>;

    // Throws std::runtime_error when it cannot make its pipe or event.
    SubmitWorker(event_base* base, const DaemonConfig& config, store::Database db, std::function<void()> wake,
                 const std::atomic<int>* cluster_gpus, Deliver deliver, std::size_t max_queued = 64);
    // Stops and joins the thread; Replies not yet delivered are dropped (their requests go with
    // the event loop's connections).
    ~SubmitWorker();
    SubmitWorker(const SubmitWorker&) = delete;
    SubmitWorker& operator=(const SubmitWorker&) = delete;

    // Queues one submission; false when the queue is full (answer 503 then).
    bool post(void* token, const Caller& caller, std::string body, double now);

private:
    struct Job {
        void* token;
        Caller caller;
        std::string body;
        double now;
    };
    struct Done {
        void* token;
        Reply reply;
    };
    void run();
    static void on_done(int fd, short, void* self);

    DaemonConfig config_;
    store::Database db_;
    std::function<void()> wake_;
    const std::atomic<int>* cluster_gpus_;
    Deliver deliver_;
    std::size_t max_queued_;
    int pipe_[2] = {-1, -1};
    event* done_event_ = nullptr;

    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<Job> queue_;
    std::deque<Done> done_;
    bool stop_ = false;
    std::thread thread_;
};

}  // namespace acme::evalsched
