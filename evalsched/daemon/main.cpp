// evalschedd: the evaluation scheduler daemon (man evalschedd(8)). The event loop serves the
// API; a second thread runs the scheduler, which alone talks to slurmctld. Both keep their
// state in one SQLite file, so kill -9 at any moment loses nothing (see state.hpp).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <event2/event.h>
#include <event2/thread.h>

#include "common/slurm/cluster.hpp"
#include "common/util/cli_checks.hpp"
#include "common/util/version.hpp"
#include "evalsched/daemon/api/http_api.hpp"
#include "evalsched/daemon/config.hpp"
#include "evalsched/daemon/follow_watcher.hpp"
#include "evalsched/daemon/log.hpp"
#include "evalsched/daemon/sched/scheduler.hpp"
#include "evalsched/store/schema.hpp"


namespace {

struct Wakeup {
    std::mutex mutex;
    std::condition_variable cv;
    bool pending = false;
    bool stop = false;
    void wake() {
        {
            std::lock_guard lock(mutex);
            pending = true;
        }
        cv.notify_one();
    }
};

void on_signal(evutil_socket_t, short, void* base) { event_base_loopbreak(static_cast<event_base*>(base)); }

}  // namespace

int main(int argc, char** argv) {
    using namespace acme::evalsched;
    CLI::App app{"evalschedd: schedules checkpoint evaluations into a Slurm cluster's backfill windows"};
    std::string config_path{kDefaultConfigPath};
    bool foreground = false;
    app.set_version_flag("-V,--version", acme::version_line("evalschedd"), "print the version and exit");
    app.formatter(std::make_shared<acme::util::HelpFormatter>());
    app.add_option("-f,--config", config_path, "configuration file (evalsched.conf(5))")->capture_default_str();
    app.add_flag("-D,--foreground", foreground, "stay in the foreground, log to stderr");
    CLI11_PARSE(app, argc, argv);

    DaemonConfig config;
    try {
        config = load_config(config_path);
    } catch (const ConfigError& e) {
        std::fprintf(stderr, "evalschedd: %s\n", e.what());
        return 2;
    }
    if (config.stage_helper.empty()) config.stage_helper = std::string(acme::paths::kHelperDir) + "/evalsched-stage.sh";
    if (access(config.stage_helper.c_str(), R_OK) != 0) {
        std::fprintf(stderr, "evalschedd: stage_helper %s is not readable: install evalsched-stage.sh or set stage_helper=\n",
                     config.stage_helper.c_str());
        return 2;
    }

    if (config.follow_helper.empty()) config.follow_helper = std::string(acme::paths::kHelperDir) + "/evalsched-ckpt-scan";
    std::optional<acme::store::Database> api_db, submit_db, sched_db, follow_db;
    try {
        sched_db.emplace(acme::store::open_evalsched_store(config.database));
        api_db.emplace(acme::store::open_evalsched_store(config.database));
        submit_db.emplace(acme::store::open_evalsched_store(config.database));
        follow_db.emplace(acme::store::open_evalsched_store(config.database));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "evalschedd: database %s: %s\n", config.database.c_str(), e.what());
        return 2;
    }
    std::string rules_error;
    auto engine = acme::diagnose::load_engine_noexcept(config.rules_dir, rules_error);

    event_base* base = event_base_new();
    Wakeup wakeup;
    // One look at the nodes before serving, so the first submissions are sized to the cluster
    // too (the scheduler refreshes it every round); without slurmctld, the fixed defaults.
    std::atomic<int> cluster_gpus{0};
    {
        std::string error;
        if (auto nodes = acme::slurm::load_node_gpus(error)) cluster_gpus = acme::slurm::usable_gpus(*nodes);
    }
    SchedulerStatus sched_status;
    std::optional<HttpApi> api;
    try {
        api.emplace(base, config, std::move(*api_db), std::move(*submit_db), [&] { wakeup.wake(); }, &cluster_gpus, &sched_status);
        api->listen();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "evalschedd: %s\n", e.what());
        return 1;
    }
    if (!foreground) {
        if (daemon(0, 1) != 0) {
            std::perror("evalschedd: daemon");
            return 1;
        }
    }
    if (!config.log_file.empty()) {
        const int fd = open(config.log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
        if (fd >= 0) {
            dup2(fd, STDERR_FILENO);
            close(fd);
        }
    }
    if (!engine) log_line("no diagnosis rules ({}): every failure counts as unknown and is retried", rules_error);
    log_line("listening on {}{}", config.socket, config.metrics_listen.empty() ? "" : ", metrics on " + config.metrics_listen);

    if (access(config.follow_helper.c_str(), X_OK) != 0)
        log_line("follow_helper {} is not executable: evalsched follow reports every scan as failed until it is installed",
                 config.follow_helper);
    FollowWatcher follower(config, std::move(*follow_db), [&] { wakeup.wake(); }, &cluster_gpus);
    follower.start();

    std::thread scheduler_thread([&] {
        Scheduler scheduler(config, std::move(*sched_db), std::move(engine), &cluster_gpus, &sched_status, [&] { wakeup.wake(); });
        std::unique_lock lock(wakeup.mutex);
        while (!wakeup.stop) {
            wakeup.pending = false;
            lock.unlock();
            scheduler.tick();
            lock.lock();
            // The full round runs every poll_interval; between rounds, a cheap look every
            // change_poll_interval runs one at once when a job of ours changed state (a trial
            // ended: its GPU gets the next trial now, not at the timer).
            using Clock = std::chrono::steady_clock;
            const auto seconds = [](double s) { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); };
            const Clock::time_point next_round = Clock::now() + seconds(config.poll_interval_s);
            while (!wakeup.pending && !wakeup.stop) {
                const Clock::time_point now = Clock::now();
                if (now >= next_round) break;
                Clock::time_point until = next_round;
                if (config.change_poll_interval_s > 0) until = std::min(next_round, now + seconds(config.change_poll_interval_s));
                if (wakeup.cv.wait_until(lock, until, [&] { return wakeup.pending || wakeup.stop; })) break;
                if (config.change_poll_interval_s <= 0 || Clock::now() >= next_round) continue;
                lock.unlock();
                const bool changed = scheduler.jobs_changed();
                lock.lock();
                if (changed) break;
            }
        }
    });

    std::signal(SIGPIPE, SIG_IGN);
    event* term = evsignal_new(base, SIGTERM, on_signal, base);
    event* intr = evsignal_new(base, SIGINT, on_signal, base);
    event_add(term, nullptr);
    event_add(intr, nullptr);
    event_base_dispatch(base);
    log_line("stopping");
    {
        std::lock_guard lock(wakeup.mutex);
        wakeup.stop = true;
    }
    wakeup.cv.notify_one();
    scheduler_thread.join();
    event_free(term);
    event_free(intr);
    unlink(config.socket.c_str());
    return 0;
}
