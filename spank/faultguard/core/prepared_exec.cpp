#include "spank/faultguard/core/prepared_exec.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

namespace acme::faultguard {

bool lock_held(const char* path) noexcept {
    const int fd = ::open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return false;
    struct flock probe {};
    probe.l_type = F_WRLCK;
    probe.l_whence = SEEK_SET;
    const bool held = ::fcntl(fd, F_OFD_GETLK, &probe) == 0 && probe.l_type != F_UNLCK;
    ::close(fd);
    return held;
}

bool PreparedExec::prepare(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                           const std::string& unless_locked) noexcept {
    argc_ = 0;
    unless_locked_ = nullptr;
    argv_[0] = nullptr;
    env_[0] = nullptr;
    if (argv.empty() || argv.size() > kMaxStrings || env.size() > kMaxStrings) return false;
    std::size_t used = 0;
    const auto copy = [&](const std::string& s) -> char* {
        if (s.find('\0') != std::string::npos || used + s.size() + 1 > kMaxBytes) return nullptr;
        char* at = text_ + used;
        std::memcpy(at, s.c_str(), s.size() + 1);
        used += s.size() + 1;
        return at;
    };
    for (std::size_t i = 0; i < argv.size(); ++i)
        if (!(argv_[i] = copy(argv[i]))) return false;
    argv_[argv.size()] = nullptr;
    for (std::size_t i = 0; i < env.size(); ++i)
        if (!(env_[i] = copy(env[i]))) return false;
    env_[env.size()] = nullptr;
    if (!unless_locked.empty() && !(unless_locked_ = copy(unless_locked))) return false;
    argc_ = argv.size();
    return true;
}

pid_t PreparedExec::start() const noexcept {
    if (argc_ == 0) return -1;
    if (unless_locked_ && lock_held(unless_locked_)) return 0;
    const pid_t pid = _Fork();
    if (pid == 0) {
        setsid();
        execve(argv_[0], argv_, env_);
        _exit(127);
    }
    return pid;
}

}  // namespace acme::faultguard
