// evalsched follow's watcher: a thread of its own with a libevent timer every follow_interval
// (a scan reads a user's directory through a helper and may take seconds: never on the API's
// loop). Each round, for every active follow, evalsched-ckpt-scan lists the complete
// checkpoints as the follow's user, plan_follow decides, and each checkpoint to evaluate is
// submitted through the submit route (the same checks and trials as evalsched submit), then
// recorded. A daemon killed between the two finds the evaluation by its path on restart and
// records it instead of submitting again (orphaned_evaluation).
#pragma once

#include <atomic>
#include <functional>
#include <thread>

#include "common/store/database.hpp"
#include "evalsched/daemon/config.hpp"
#include "evalsched/daemon/follows.hpp"
#include "evalsched/daemon/user_files.hpp"

struct event_base;
struct event;

namespace acme::evalsched {

// Follow scans run at once, at most this many (each a helper process and a waiting thread).
inline constexpr std::size_t kScansInFlight = 16;

class FollowWatcher {
public:
    FollowWatcher(const DaemonConfig& config, store::Database db, std::function<void()> wake, const std::atomic<int>* cluster_gpus);
    ~FollowWatcher();
    FollowWatcher(const FollowWatcher&) = delete;
    FollowWatcher& operator=(const FollowWatcher&) = delete;

    // Starts the thread (after evalschedd forked: a thread does not survive fork(2)).
    void start();
    // One round over every active follow (the timer's work; the unit tests call it directly).
    void scan_all(double now);

private:
    // What one follow's scan found (nullopt: no answer in time), planned and submitted.
    void take_scan(const FollowRow& f, const FollowMemory& memory, const std::optional<HelperAnswer>& answer, double now);
    static void on_timer(int, short, void* self);
    static void on_stop(int fd, short, void* self);

    DaemonConfig config_;
    store::Database db_;
    std::function<void()> wake_;
    const std::atomic<int>* cluster_gpus_;
    int stop_pipe_[2] = {-1, -1};
    std::thread thread_;
};

}  // namespace acme::evalsched
