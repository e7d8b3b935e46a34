#include "evalsched/daemon/user_files.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <mutex>

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "evalsched/daemon/accounts.hpp"

namespace acme::evalsched {
namespace {

// The child's descriptors: its answer, and the directory it works in (when there is one).
constexpr int kOutFd = 3;
constexpr int kDirFd = 4;

// Children killed after their time but not reaped yet (stuck in the kernel): reaped later.
std::mutex g_stragglers_mu;
std::vector<pid_t> g_stragglers;

void reap_stragglers() {
    std::lock_guard lock(g_stragglers_mu);
    std::erase_if(g_stragglers, [](pid_t p) { return waitpid(p, nullptr, WNOHANG) != 0; });
}

double monotonic_s() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

struct ChildAnswer {
    bool exited = false;  // it ran to the end in time (status is then its exit status)
    int status = -1;
    std::string output;
};

// Forks a child that becomes `who` and runs body(): its stdout is kOutFd, `dir_fd` (if >= 0)
// is kDirFd, nothing else stays open. body runs in the forked child of a threaded process:
// only async-signal-safe calls (open, read, write, mkdirat, ...), no allocation.
template <class Body>
ChildAnswer run_as(const UserIdentity& who, int dir_fd, std::size_t max_output, double timeout_s, Body&& body) {
    reap_stragglers();
    ChildAnswer answer;
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return answer;
    // Above the numbers the child moves them to, so neither dup2 clobbers the other.
    const int out_hi = fcntl(p[1], F_DUPFD_CLOEXEC, 10);
    const int dir_hi = dir_fd >= 0 ? fcntl(dir_fd, F_DUPFD_CLOEXEC, 10) : -1;
    close(p[1]);
    const bool root = geteuid() == 0;
    const pid_t pid = out_hi < 0 || (dir_fd >= 0 && dir_hi < 0) ? -1 : fork();
    if (pid == 0) {
        if (dup2(out_hi, kOutFd) < 0) _exit(127);
        if (dir_hi >= 0 && dup2(dir_hi, kDirFd) < 0) _exit(127);
        // The daemon's database, socket and clients stay out of a process the user owns.
        const int first = dir_hi >= 0 ? kDirFd + 1 : kOutFd + 1;
        if (close_range(static_cast<unsigned>(first), ~0U, 0) != 0)
            for (int fd = first; fd < 65536; ++fd) close(fd);  // a kernel or seccomp filter without it
        if (root && (setgroups(who.groups.size(), who.groups.data()) != 0 || setresgid(who.gid, who.gid, who.gid) != 0 ||
                     setresuid(who.uid, who.uid, who.uid) != 0))
            _exit(126);
        _exit(body());
    }
    if (out_hi >= 0) close(out_hi);
    if (dir_hi >= 0) close(dir_hi);
    if (pid < 0) {
        close(p[0]);
        return answer;
    }
    const double deadline = monotonic_s() + timeout_s;
    auto ms_left = [&] { return static_cast<int>(std::max(0.0, (deadline - monotonic_s()) * 1000)); };
    bool eof = false;
    char buf[16384];
    while (!eof) {
        pollfd pfd{p[0], POLLIN, 0};
        const int left = ms_left();
        if (left <= 0) break;
        const int r = poll(&pfd, 1, left);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        const ssize_t n = read(p[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            eof = n == 0;
            break;
        }
        answer.output.append(buf, std::min(static_cast<std::size_t>(n), max_output - std::min(max_output, answer.output.size())));
    }
    close(p[0]);
    int status = 0;
    bool reaped = false;
    while (eof && !reaped) {
        const pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) reaped = true;
        else if ((w < 0 && errno != EINTR) || ms_left() <= 0) break;
        else usleep(1000);
    }
    if (!reaped) {
        kill(pid, SIGKILL);
        if (waitpid(pid, nullptr, WNOHANG) != pid) {
            std::lock_guard lock(g_stragglers_mu);
            g_stragglers.push_back(pid);
        }
        answer.output.clear();
        return answer;
    }
    answer.exited = WIFEXITED(status);
    answer.status = answer.exited ? WEXITSTATUS(status) : -1;
    return answer;
}

}  // namespace

bool write_all(int fd, const char* p, std::size_t n) {
    while (n > 0) {
        const ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        n -= static_cast<std::size_t>(w);
    }
    return true;
}

UserIdentity identity_of(uid_t uid, gid_t gid) {
    const auto account = account_of(uid);
    if (!account) return UserIdentity{uid, gid, {gid}};
    UserIdentity who{uid, gid, groups_of(account->name, account->gid)};
    // The stored gid stands while the user still belongs to that group; a user who left it
    // since runs as their primary group now, never as the old one.
    if (std::find(who.groups.begin(), who.groups.end(), gid) == who.groups.end()) who.gid = account->gid;
    return who;
}

namespace {
// The child's exit codes for read_file_as (UserText::Status).
constexpr int kReadMissing = 2, kReadNotRegular = 3, kReadTooLarge = 4;

UserText read_file_as(const std::string& path, uid_t uid, gid_t gid, std::size_t max_bytes, double timeout_s, bool whole) {
    const UserIdentity who = identity_of(uid, gid);
    const char* file = path.c_str();
    ChildAnswer a = run_as(who, -1, max_bytes, timeout_s, [&]() -> int {
        // O_NONBLOCK: a FIFO planted in place of a result must not hang the open.
        const int fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0) return errno == ENOENT || errno == ENOTDIR ? kReadMissing : errno == ELOOP ? kReadNotRegular : 1;
        struct stat st {};
        if (fstat(fd, &st) != 0) return 1;
        if (!S_ISREG(st.st_mode)) return kReadNotRegular;
        const off_t end = st.st_size;
        if (whole && end > static_cast<off_t>(max_bytes)) return kReadTooLarge;
        off_t at = end > static_cast<off_t>(max_bytes) ? end - static_cast<off_t>(max_bytes) : 0;
        char chunk[16384];
        while (at < end) {
            const ssize_t n = pread(fd, chunk, static_cast<std::size_t>(std::min<off_t>(sizeof chunk, end - at)), at);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) return 1;
            if (n == 0) break;
            if (!write_all(kOutFd, chunk, static_cast<std::size_t>(n))) return 1;
            at += n;
        }
        return 0;
    });
    UserText t;
    if (!a.exited) t.status = UserText::no_answer;
    else if (a.status == 0) {
        t.status = UserText::ok;
        t.text = std::move(a.output);
    } else if (a.status == kReadMissing) t.status = UserText::missing;
    else if (a.status == kReadNotRegular) t.status = UserText::not_regular;
    else if (a.status == kReadTooLarge) t.status = UserText::too_large;
    else t.status = UserText::unreadable;
    return t;
}
}  // namespace

std::optional<std::string> read_as_user(const std::string& path, uid_t uid, gid_t gid, std::size_t max_bytes, double timeout_s) {
    UserText t = read_file_as(path, uid, gid, max_bytes, timeout_s, false);
    if (t.status != UserText::ok) return std::nullopt;
    return std::move(t.text);
}

UserText read_whole_as_user(const std::string& path, uid_t uid, gid_t gid, std::size_t max_bytes, double timeout_s) {
    return read_file_as(path, uid, gid, max_bytes, timeout_s, true);
}

std::optional<std::string> prepare_user_dirs(const std::string& dir, const std::vector<std::string>& subdirs, uid_t uid, gid_t gid,
                                             double timeout_s) {
    const auto slash = dir.rfind('/');
    if (dir.empty() || dir[0] != '/' || slash + 1 >= dir.size())
        return fmt::format("output directory {} is not an absolute path: fix results_dir", dir);
    const std::string parent = slash == 0 ? "/" : dir.substr(0, slash), name = dir.substr(slash + 1);
    // results_dir is the admin's (root-owned): its own path is trusted, the entry in it is not.
    const int pfd = open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (pfd < 0) return fmt::format("results directory {} cannot be opened ({}): create it or fix results_dir", parent, std::strerror(errno));
    if (mkdirat(pfd, name.c_str(), 0750) != 0 && errno != EEXIST) {
        const int err = errno;
        close(pfd);
        return fmt::format("cannot create output directory {}: {}", dir, std::strerror(err));
    }
    const int fd = openat(pfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        // O_DIRECTORY|O_NOFOLLOW on a symlink answers ENOTDIR: say which it is.
        const int err = errno;
        struct stat lst {};
        const bool link = fstatat(pfd, name.c_str(), &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode);
        close(pfd);
        return fmt::format("output directory {} is not a directory ({}): remove it, then submit again", dir,
                           link ? "a symlink" : std::strerror(err));
    }
    close(pfd);
    struct stat st {};
    const bool root = geteuid() == 0;
    std::optional<std::string> error;
    if (fstat(fd, &st) != 0) {
        error = fmt::format("cannot inspect output directory {}: {}", dir, std::strerror(errno));
    } else if (root && st.st_uid != uid && st.st_uid != 0) {
        // Someone else's directory: never hand it over (only root creates one owned by another).
        error = fmt::format("output directory {} belongs to uid {}, not to the evaluation's uid {}: remove it, then submit again", dir,
                            st.st_uid, uid);
    } else if (root && st.st_uid != uid && fchown(fd, uid, gid) != 0) {
        error = fmt::format("cannot give output directory {} to uid {}: {}", dir, uid, std::strerror(errno));
    }
    if (error) {
        close(fd);
        return error;
    }
    // The rest as the user, relative to the directory just checked: whatever the user put
    // there, root resolves none of it. The child answers with the index of the first
    // subdirectory it refused (1-based), nothing when all are fine.
    std::vector<const char*> names;
    for (const auto& s : subdirs) names.push_back(s.c_str());
    const UserIdentity who = identity_of(uid, gid);
    ChildAnswer a = run_as(who, fd, 16, timeout_s, [&]() -> int {
        const uid_t me = getuid();
        for (std::size_t i = 0; i < names.size(); ++i) {
            struct stat sub {};
            const bool made = mkdirat(kDirFd, names[i], 0750) == 0 || errno == EEXIST;
            if (!made || fstatat(kDirFd, names[i], &sub, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(sub.st_mode) || sub.st_uid != me) {
                const char index = static_cast<char>(i + 1);
                write_all(kOutFd, &index, 1);
                return 1;
            }
        }
        return 0;
    });
    close(fd);
    if (a.exited && a.status == 0) return std::nullopt;
    if (a.exited && a.status == 1 && a.output.size() == 1) {
        const auto i = static_cast<std::size_t>(static_cast<unsigned char>(a.output[0]) - 1);
        if (i < subdirs.size())
            return fmt::format("{}/{} is not a directory owned by uid {} (a symlink or a file?): remove it, then submit again", dir, subdirs[i],
                               uid);
    }
    return fmt::format("cannot create the directories in {} as uid {}: {}", dir, uid,
                       a.exited ? (a.status == 126 ? "cannot become that user" : "it failed") : "no answer in time (a hung file system?)");
}

std::optional<HelperAnswer> run_helper_as_user(const std::vector<std::string>& argv, uid_t uid, gid_t gid, std::size_t max_output,
                                               double timeout_s) {
    if (argv.empty() || argv[0].empty() || argv[0][0] != '/') return std::nullopt;
    // Everything the child touches is built before fork: it only dup2s, opens and execs.
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    static char path_env[] = "PATH=/usr/bin:/bin";
    static char lang_env[] = "LC_ALL=C";
    char* envp[] = {path_env, lang_env, nullptr};
    const UserIdentity who = identity_of(uid, gid);
    ChildAnswer a = run_as(who, -1, max_output, timeout_s, [&]() -> int {
        if (dup2(kOutFd, STDOUT_FILENO) < 0) return 127;
        close(kOutFd);
        const int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null >= 0) dup2(null, STDIN_FILENO);
        execve(args[0], args.data(), envp);
        return 127;
    });
    if (!a.exited && a.status == -1 && a.output.empty()) {
        // Killed after its time, or never started: no answer either way.
        return std::nullopt;
    }
    return HelperAnswer{a.exited ? a.status : -1, std::move(a.output)};
}

}  // namespace acme::evalsched
