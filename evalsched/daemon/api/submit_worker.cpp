#include "evalsched/daemon/api/submit_worker.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

#include <event2/event.h>
#include <fmt/format.h>

#include "evalsched/daemon/api/api_request.hpp"
#include "evalsched/daemon/caches.hpp"
#include "evalsched/daemon/log.hpp"

namespace acme::evalsched {

SubmitWorker::SubmitWorker(event_base* base, const DaemonConfig& config, store::Database db, std::function<void()> wake,
                           const std::atomic<int>* cluster_gpus, Deliver deliver, std::size_t max_queued)
    : config_(config),
      db_(std::move(db)),
      wake_(std::move(wake)),
      cluster_gpus_(cluster_gpus),
      deliver_(std::move(deliver)),
      max_queued_(max_queued) {
    // Non-blocking both ends: the worker never waits on a full pipe (one byte per Reply is
    // only a nudge; the loop drains every finished Reply on each wakeup).
    if (pipe2(pipe_, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error(fmt::format("submit worker pipe: {}", std::strerror(errno)));
    done_event_ = event_new(base, pipe_[0], EV_READ | EV_PERSIST, &SubmitWorker::on_done, this);
    if (!done_event_ || event_add(done_event_, nullptr) != 0) {
        if (done_event_) event_free(done_event_);
        close(pipe_[0]);
        close(pipe_[1]);
        throw std::runtime_error("submit worker: cannot watch its pipe");
    }
}

SubmitWorker::~SubmitWorker() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    cv_.notify_one();
    if (thread_.joinable()) thread_.join();
    event_free(done_event_);
    close(pipe_[0]);
    close(pipe_[1]);
}

bool SubmitWorker::post(void* token, const Caller& caller, std::string body, double now) {
    {
        std::lock_guard lock(mutex_);
        if (queue_.size() >= max_queued_) return false;
        // One user's flood leaves room for the others: a quarter of the queue each at most.
        const auto mine = std::count_if(queue_.begin(), queue_.end(), [&](const Job& j) { return j.caller.uid == caller.uid; });
        if (static_cast<std::size_t>(mine) >= std::max<std::size_t>(1, max_queued_ / 4)) return false;
        queue_.push_back(Job{token, caller, std::move(body), now});
        // Started at the first submission, not in the constructor: evalschedd forks into the
        // background after building its API, and a thread does not survive fork(2).
        if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
    }
    cv_.notify_one();
    return true;
}

void SubmitWorker::run() {
    ApiCaches caches;   // the submit route reads none; RouteContext wants one
    std::unique_lock lock(mutex_);
    for (;;) {
        cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (stop_) return;
        Job job = std::move(queue_.front());
        queue_.pop_front();
        lock.unlock();
        Reply reply;
        try {
            RouteMatch match;
            match.row = &route_row("POST", "/v1/evaluations");
            RouteContext ctx{db_, config_, job.caller, match, job.body, caches, wake_,
                             cluster_gpus_ ? cluster_gpus_->load() : 0, job.now};
            reply = route_submit(ctx);
        } catch (const std::exception& ex) {
            log_line("submission by {} failed: {}", job.caller.user, ex.what());
            reply = error_reply(500, std::string("evalschedd: ") + ex.what());
        }
        lock.lock();
        done_.push_back(Done{job.token, std::move(reply)});
        const char nudge = 1;
        // EAGAIN: the pipe already holds nudges the loop has not read; it will drain done_.
        [[maybe_unused]] const ssize_t n = write(pipe_[1], &nudge, 1);
    }
}

void SubmitWorker::on_done(int fd, short, void* self) {
    auto* w = static_cast<SubmitWorker*>(self);
    char buf[256];
    while (read(fd, buf, sizeof buf) > 0) {
    }
    std::deque<Done> done;
    {
        std::lock_guard lock(w->mutex_);
        done.swap(w->done_);
    }
    for (const Done& d : done) w->deliver_(d.token, d.reply);
}

}  // namespace acme::evalsched
