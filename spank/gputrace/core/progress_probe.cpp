#include "spank/gputrace/core/progress_probe.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/util/spawn.hpp"

namespace acme::telemetry {
namespace {

// What the child sends back: fixed size, so a partial write is simply "nothing found".
struct Answer {
    long long log_size = -1;
    double heartbeat_mtime = -1;
    double ckpt_mtime = -1;
    long long ckpt_bytes = -1;
};

double mtime(const struct stat& st) { return static_cast<double>(st.st_mtim.tv_sec) + st.st_mtim.tv_nsec / 1e9; }

// The newest mtime and total size of DIR, its entries and theirs; at most a few thousand
// entries, so a huge tree costs a bounded look.
void walk(int dirfd, int depth, Answer& a, int& budget) {
    DIR* d = fdopendir(dirfd);
    if (!d) {
        ::close(dirfd);
        return;
    }
    while (const dirent* e = readdir(d)) {
        if (--budget < 0) break;
        if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
        struct stat st {};
        if (fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        a.ckpt_mtime = std::max(a.ckpt_mtime, mtime(st));
        if (S_ISREG(st.st_mode)) a.ckpt_bytes += st.st_size;
        if (S_ISDIR(st.st_mode) && depth > 0) {
            const int sub = openat(::dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) walk(sub, depth - 1, a, budget);
        }
    }
    closedir(d);
}

[[noreturn]] void child(int fd, const ProbePaths& p, uid_t uid, gid_t gid) {
    // Groups and gid while still root, uid last; then check it cannot be undone.
    if (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(uid) != 0) _exit(2);
    if (uid != 0 && setuid(0) == 0) _exit(2);
    Answer a;
    for (const auto& path : p.logs) {
        struct stat st {};
        if (!path.empty() && stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
            a.log_size = std::max(0LL, a.log_size) + st.st_size;
    }
    // The heartbeat: a regular file in the job's private directory (heartbeat_dir.hpp), neither
    // of them reached through a symlink the user planted there.
    if (const auto slash = p.heartbeat.rfind('/'); slash != std::string::npos && slash > 0) {
        const int d = ::open(p.heartbeat.substr(0, slash).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st {};
        if (d >= 0 && fstatat(d, p.heartbeat.c_str() + slash + 1, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
            a.heartbeat_mtime = mtime(st);
        if (d >= 0) ::close(d);
    }
    if (!p.ckpt_dir.empty()) {
        const int d = ::open(p.ckpt_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (d >= 0) {
            struct stat st {};
            if (fstat(d, &st) == 0) {
                a.ckpt_mtime = mtime(st);
                a.ckpt_bytes = 0;
            }
            int budget = 4096;
            walk(d, 1, a, budget);
        }
    }
    const ssize_t n = ::write(fd, &a, sizeof a);
    _exit(n == static_cast<ssize_t>(sizeof a) ? 0 : 3);
}

}  // namespace

Probe probe_as_user(const ProbePaths& paths, uid_t uid, gid_t gid, double timeout_s) {
    Probe out;
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) return out;
    const pid_t pid = util::fork_supervised();
    if (pid < 0) {
        ::close(pipefd[0]);
        ::close(pipefd[1]);
        return out;
    }
    if (pid == 0) {
        // Nothing of the sampler's (the spool, NVML) stays open while the user's files are.
        if (dup2(pipefd[1], 3) != 3) _exit(3);
        syscall(SYS_close_range, 4U, ~0U, 0U);
        child(3, paths, uid, gid);
    }
    ::close(pipefd[1]);
    Answer a;
    std::size_t got = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    bool timed_out = false;
    while (got < sizeof a) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        pollfd pfd{pipefd[0], POLLIN, 0};
        const int r = poll(&pfd, 1, static_cast<int>(left));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            timed_out = r == 0;
            break;
        }
        const ssize_t n = ::read(pipefd[0], reinterpret_cast<char*>(&a) + got, sizeof a - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    ::close(pipefd[0]);
    int status = 0;
    if (timed_out || !util::reap_within(pid, status, util::kKillGraceSeconds)) {
        kill(-pid, SIGKILL);
        util::reap_within(pid, status, util::kKillGraceSeconds);
    }
    if (got != sizeof a) return out;
    if (a.log_size >= 0) out.log_size = a.log_size;
    if (a.heartbeat_mtime >= 0) out.heartbeat_mtime = a.heartbeat_mtime;
    if (a.ckpt_mtime >= 0) out.ckpt_mtime = a.ckpt_mtime;
    if (a.ckpt_bytes >= 0) out.ckpt_bytes = a.ckpt_bytes;
    return out;
}

}  // namespace acme::telemetry
