#include "evalsched/daemon/pilot_steps.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>

#include <fmt/format.h>

namespace acme::evalsched {

StepRunner::StepRunner(std::function<void()> wake) : shared_(std::make_shared<Shared>()) { shared_->wake = std::move(wake); }

bool StepRunner::start(std::int64_t attempt, const std::vector<std::string>& argv, const std::vector<std::string>& env, std::string& error) {
    std::vector<char*> av, ev;
    for (const auto& a : argv) av.push_back(const_cast<char*>(a.c_str()));
    av.push_back(nullptr);
    for (const auto& e : env) ev.push_back(const_cast<char*>(e.c_str()));
    ev.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    // Its own process group: a signal meant for the daemon's group never reaches the steps.
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, av[0], &fa, &attr, av.data(), ev.data());
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        error = fmt::format("cannot start {}: {}", argv[0], std::strerror(rc));
        return false;
    }
    {
        std::lock_guard lock(shared_->mutex);
        shared_->status[attempt] = std::nullopt;
    }
    std::thread([shared = shared_, pid, attempt] {
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        {
            std::lock_guard lock(shared->mutex);
            if (auto it = shared->status.find(attempt); it != shared->status.end()) it->second = status;
        }
        if (shared->wake) shared->wake();
    }).detach();
    return true;
}

bool StepRunner::known(std::int64_t attempt) const {
    std::lock_guard lock(shared_->mutex);
    return shared_->status.count(attempt) != 0;
}

std::optional<int> StepRunner::exited(std::int64_t attempt) const {
    std::lock_guard lock(shared_->mutex);
    auto it = shared_->status.find(attempt);
    return it == shared_->status.end() ? std::nullopt : it->second;
}

void StepRunner::forget(std::int64_t attempt) {
    std::lock_guard lock(shared_->mutex);
    shared_->status.erase(attempt);
}

}  // namespace acme::evalsched
