// A program started from where only async-signal-safe calls are allowed: a hard stop's SIGALRM
// handler (core/hard_stop.hpp) starts the node's record retrier when it ends a publisher that
// slurmdbd left hanging. Everything is copied into static storage when it is prepared; start()
// forks with _Fork (no atfork handlers), puts the child in a session of its own and execs.
// The started program resets what it inherits itself (record_retrier.cpp: signal mask,
// descriptors, priority).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace acme::faultguard {

// Whether another open file holds a write lock (fcntl F_OFD_SETLK, whole file) on `path`:
// asked with F_OFD_GETLK, which takes no lock of its own (a probe with flock would make the
// holder's own attempt fail). Never follows a link. Async-signal-safe.
bool lock_held(const char* path) noexcept;

class PreparedExec {
public:
    // argv[0] is the program's path; env is its whole environment. False when it does not fit
    // (kMaxBytes, kMaxStrings): then start() starts nothing. unless_locked: a lock file (an OFD
    // write lock, see lock_held) that, while another process holds it, makes start() start
    // nothing: the program it names runs already (the node's record retrier's lock).
    bool prepare(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                 const std::string& unless_locked = {}) noexcept;
    // The child's pid; 0 when unless_locked is held (nothing to start); -1 (not prepared, or fork
    // failed). Async-signal-safe.
    pid_t start() const noexcept;
    bool prepared() const noexcept { return argc_ > 0; }

    static constexpr std::size_t kMaxBytes = 8192;
    static constexpr std::size_t kMaxStrings = 32;

private:
    char text_[kMaxBytes] = {};
    const char* unless_locked_ = nullptr;
    char* argv_[kMaxStrings + 1] = {};
    char* env_[kMaxStrings + 1] = {};
    std::size_t argc_ = 0;
};

}  // namespace acme::faultguard
