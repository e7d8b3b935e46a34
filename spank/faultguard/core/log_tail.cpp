#include "spank/faultguard/core/log_tail.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "common/util/spawn.hpp"

namespace acme::faultguard {
namespace {

// Child side: one record per path, "<status byte><8-byte length><bytes>", status 0 = data,
// 1 = note (the bytes are the reason).
void write_all(int fd, const void* data, std::size_t size) {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t n = ::write(fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) _exit(3);
        p += n;
        size -= static_cast<std::size_t>(n);
    }
}

void send(int fd, char kind, const std::string& bytes) {
    const std::uint64_t len = bytes.size();
    write_all(fd, &kind, 1);
    write_all(fd, &len, sizeof len);
    write_all(fd, bytes.data(), bytes.size());
}

[[noreturn]] void child(int fd, const std::vector<std::string>& paths, uid_t uid, gid_t gid, long long max_bytes) {
    // Order matters: groups and gid while still root, uid last; then check it cannot be undone.
    if (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(uid) != 0) _exit(2);
    if (uid != 0 && setuid(0) == 0) _exit(2);
    for (const auto& path : paths) {
        // O_NONBLOCK: opening a FIFO the user put there must not hang us.
        const int in = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (in < 0) {
            send(fd, 1, fmt::format("{}: {}", path, std::strerror(errno)));
            continue;
        }
        struct stat st {};
        if (fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
            send(fd, 1, fmt::format("{}: not a regular file", path));
            ::close(in);
            continue;
        }
        const off_t start = st.st_size > max_bytes ? st.st_size - max_bytes : 0;
        std::string buf(static_cast<std::size_t>(std::min<long long>(st.st_size, max_bytes)), '\0');
        const ssize_t n = pread(in, buf.data(), buf.size(), start);
        ::close(in);
        buf.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
        if (start > 0) {
            const auto nl = buf.find('\n');
            buf.erase(0, nl == std::string::npos ? buf.size() : nl + 1);
        }
        send(fd, 0, buf);
    }
    _exit(0);
}

}  // namespace

TailResult read_tails_as_user(const std::vector<std::string>& paths, uid_t uid, gid_t gid, long long max_bytes,
                              double timeout_s) {
    TailResult result;
    std::vector<std::string> distinct;
    for (const auto& p : paths)
        if (!p.empty() && std::find(distinct.begin(), distinct.end(), p) == distinct.end()) distinct.push_back(p);
    if (distinct.empty()) return result;
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        result.notes.push_back(fmt::format("pipe: {}", std::strerror(errno)));
        return result;
    }
    // Supervised: a child stuck reading a user's file (a hung NFS or FUSE mount) cannot hold
    // the epilog past its timeout.
    const pid_t pid = util::fork_supervised();
    if (pid < 0) {
        result.notes.push_back(fmt::format("fork: {}", std::strerror(errno)));
        ::close(pipefd[0]);
        ::close(pipefd[1]);
        return result;
    }
    if (pid == 0) {
        // Nothing of the caller's (the spool's database, its logs) stays open while the user's
        // files are: only the pipe, as descriptor 3.
        if (dup2(pipefd[1], 3) != 3) _exit(3);
        syscall(SYS_close_range, 4U, ~0U, 0U);
        const int devnull = ::open("/dev/null", O_RDWR);
        for (int fd = 0; fd < 3; ++fd) dup2(devnull, fd);
        if (devnull > 3) ::close(devnull);
        child(3, distinct, uid, gid, max_bytes);
    }
    ::close(pipefd[1]);

    std::string raw;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    const std::size_t cap = distinct.size() * (static_cast<std::size_t>(max_bytes) + 4096);
    bool timed_out = false;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            timed_out = true;
            break;
        }
        pollfd pfd{pipefd[0], POLLIN, 0};
        const int r = poll(&pfd, 1, static_cast<int>(left.count()));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            timed_out = r == 0;
            break;
        }
        char buf[65536];
        const ssize_t n = ::read(pipefd[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        raw.append(buf, static_cast<std::size_t>(n));
        if (raw.size() > cap) break;
    }
    ::close(pipefd[0]);
    int status = 0;
    if (!timed_out && !util::reap_within(pid, status, util::kKillGraceSeconds)) timed_out = true;
    if (timed_out) {
        kill(-pid, SIGKILL);
        if (!util::reap_within(pid, status, util::kKillGraceSeconds)) status = 0;
    }
    if (timed_out) result.notes.push_back(fmt::format("reading the log took over {} s; gave up", timeout_s));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 2) result.notes.push_back("cannot switch to the job's user");

    std::size_t pos = 0;
    while (pos + 9 <= raw.size()) {
        const char kind = raw[pos];
        std::uint64_t len = 0;
        std::memcpy(&len, raw.data() + pos + 1, sizeof len);
        pos += 9;
        if (len > raw.size() - pos) break;
        std::string bytes = raw.substr(pos, static_cast<std::size_t>(len));
        pos += static_cast<std::size_t>(len);
        if (kind == 0) {
            if (!result.text.empty() && result.text.back() != '\n') result.text += '\n';
            result.text += bytes;
        } else {
            result.notes.push_back(std::move(bytes));
        }
    }
    return result;
}

}  // namespace acme::faultguard
