#include "common/util/spawn.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>
#include <cstring>

#include <fmt/format.h>

namespace acme::util {

namespace {

// Low enough to yield to the next job's start on a busy node, high enough that a node whose
// every CPU is busy (no cgroups to keep the job apart) still lends it a tenth of one: the
// helper has a time limit, and rows it did not write are lost.
constexpr int kBackgroundNice = 10;
static_assert(kBackgroundNice == 10, "the autogroup's nice below is written as text");

// In the detached grandchild, before exec: only async-signal-safe calls. Each step is best
// effort (an older kernel without autogroup, a container that refuses ioprio).
void lower_priority() {
    setpriority(PRIO_PROCESS, 0, kBackgroundNice);
    constexpr int kIoprioClassBestEffort = 2, kIoprioClassShift = 13, kIoprioWhoProcess = 1;
    syscall(SYS_ioprio_set, kIoprioWhoProcess, 0, (kIoprioClassBestEffort << kIoprioClassShift) | 7);
    const int fd = ::open("/proc/self/autogroup", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        const ssize_t ignored = ::write(fd, "10", 2);
        (void)ignored;
        ::close(fd);
    }
}

}  // namespace

void reset_inherited(int in, int out, int err) noexcept {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);  // fails harmlessly for KILL/STOP
    dup2(in, STDIN_FILENO);  // a no-op where in is already STDIN_FILENO
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    syscall(SYS_close_range, 3U, ~0U, 0U);
}

void lower_to_background_priority() noexcept { lower_priority(); }

void restore_normal_priority() noexcept {
    setpriority(PRIO_PROCESS, 0, 0);
    constexpr int kIoprioClassNone = 0, kIoprioWhoProcess = 1;  // none: the default, from the CPU nice
    syscall(SYS_ioprio_set, kIoprioWhoProcess, 0, kIoprioClassNone);
    const int fd = ::open("/proc/self/autogroup", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        const ssize_t ignored = ::write(fd, "0", 1);
        (void)ignored;
        ::close(fd);
    }
}

pid_t fork_supervised() {
    const pid_t supervisor = fork();
    if (supervisor != 0) {
        if (supervisor > 0) setpgid(supervisor, supervisor);  // also from here: no race with its own call
        return supervisor;
    }
    setpgid(0, 0);
    const pid_t worker = fork();
    if (worker == 0) return 0;
    // The supervisor: nothing of the caller's, only the wait.
    syscall(SYS_close_range, 0U, ~0U, 0U);
    if (worker < 0) _exit(125);
    int status = 0;
    while (waitpid(worker, &status, 0) < 0) {
        if (errno != EINTR) _exit(125);
    }
    if (WIFSIGNALED(status)) {
        // Die of the same signal, so the caller's wait status reads as the worker's.
        const struct rlimit no_core {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        signal(WTERMSIG(status), SIG_DFL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, WTERMSIG(status));
        sigprocmask(SIG_UNBLOCK, &one, nullptr);
        raise(WTERMSIG(status));
        _exit(128 + WTERMSIG(status));
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 125);
}

bool reap_within(pid_t pid, int& status, double grace_s) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
    // A pidfd wakes the wait at the exit: a helper on a job's path (the health gate in every GPU
    // job's prolog) otherwise paid up to 5 ms of the poll below after it had exited. Kernels
    // before 5.3 have no pidfd_open: the poll alone.
    const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    bool reaped = false;
    for (;;) {
        const pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) {
            reaped = true;
            break;
        }
        if (w < 0 && errno != EINTR) break;
        const auto left = deadline - std::chrono::steady_clock::now();
        if (left <= std::chrono::steady_clock::duration::zero()) break;
        if (pidfd >= 0) {
            pollfd p{pidfd, POLLIN, 0};
            const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(left).count() + 1;
            poll(&p, 1, static_cast<int>(std::min<long long>(ms, 1000)));
        } else {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    }
    if (pidfd >= 0) ::close(pidfd);
    return reaped;
}

bool spawn_detached(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                    const std::string& log_path, std::string& error, Priority priority, PreExec pre_exec,
                    const void* pre_exec_arg) {
    if (argv.empty()) {
        error = "spawn: no program";
        return false;
    }
    // Everything the children need is prepared before fork: after it, only async-signal-safe calls.
    std::vector<char*> cargv, cenv;
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    for (const auto& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
    cenv.push_back(nullptr);
    if (access(argv[0].c_str(), X_OK) != 0) {
        error = fmt::format("spawn: {} is not executable: {}", argv[0], strerror(errno));
        return false;
    }
    const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    int log = log_path.empty() ? -1
                               : ::open(log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0640);
    if (log < 0) log = devnull;
    if (devnull < 0) {
        error = fmt::format("spawn: /dev/null: {}", strerror(errno));
        return false;
    }

    const pid_t child = fork();
    if (child < 0) {
        error = fmt::format("spawn: fork: {}", strerror(errno));
        ::close(devnull);
        if (log != devnull) ::close(log);
        return false;
    }
    if (child == 0) {
        setsid();
        const pid_t grandchild = fork();
        if (grandchild != 0) _exit(grandchild < 0 ? 1 : 0);
        reset_inherited(devnull, devnull, log);
        if (priority == Priority::background) lower_priority();
        if (chdir("/") != 0) _exit(126);
        if (pre_exec) pre_exec(pre_exec_arg);
        execve(cargv[0], cargv.data(), cenv.data());
        _exit(127);
    }
    ::close(devnull);
    if (log != devnull) ::close(log);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        error = "spawn: the intermediate child failed to fork";
        return false;
    }
    return true;
}

namespace {

// After `release.signal` went to the program's group: reads its stdout until the ack line, at
// most kReleaseGraceSeconds. True when it came (what came before it is kept as output).
bool await_release_ack(int fd, const Release& release, std::string& output, std::size_t max_output) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kReleaseGraceSeconds);
    std::string seen;  // what came since the signal, the ack looked for in it
    for (;;) {
        if (const auto at = seen.find(release.ack); at != std::string::npos) {
            std::string before = seen.substr(0, at);
            if (output.size() < max_output) output.append(before, 0, max_output - output.size());
            return true;
        }
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
        if (left <= 0) break;
        pollfd pfd{fd, POLLIN, 0};
        const int r = poll(&pfd, 1, static_cast<int>(left));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        char buf[1024];
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        seen.append(buf, static_cast<std::size_t>(n));
    }
    if (output.size() < max_output) output.append(seen, 0, max_output - output.size());
    return false;
}

}  // namespace

RunResult run_bounded(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      const std::string& log_path, double timeout_s, std::size_t max_output, const Release& release) {
    RunResult result;
    if (argv.empty() || access(argv[0].c_str(), X_OK) != 0) {
        result.output = fmt::format("{} is not executable: {}", argv.empty() ? "(none)" : argv[0], strerror(errno));
        return result;
    }
    std::vector<char*> cargv, cenv;
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    for (const auto& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
    cenv.push_back(nullptr);
    const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    int log = log_path.empty() ? -1
                               : ::open(log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0640);
    if (log < 0) log = devnull;
    int pipefd[2];
    if (devnull < 0 || pipe2(pipefd, O_CLOEXEC) != 0) {
        result.output = fmt::format("pipe: {}", strerror(errno));
        if (devnull >= 0) ::close(devnull);
        if (log >= 0 && log != devnull) ::close(log);
        return result;
    }
    const pid_t pid = fork_supervised();
    if (pid == 0) {
        reset_inherited(devnull, pipefd[1], log);
        execve(cargv[0], cargv.data(), cenv.data());
        _exit(127);
    }
    ::close(pipefd[1]);
    ::close(devnull);
    if (log != devnull) ::close(log);
    if (pid < 0) {
        ::close(pipefd[0]);
        result.output = fmt::format("fork: {}", strerror(errno));
        return result;
    }
    result.started = true;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    for (;;) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
        if (left <= 0) {
            result.timed_out = true;
            break;
        }
        pollfd pfd{pipefd[0], POLLIN, 0};
        const int r = poll(&pfd, 1, static_cast<int>(left));
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) {
            result.timed_out = true;
            break;
        }
        if (r < 0) break;
        char buf[1024];
        const ssize_t n = ::read(pipefd[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        if (result.output.size() < max_output)
            result.output.append(buf, std::min<std::size_t>(static_cast<std::size_t>(n), max_output - result.output.size()));
    }
    if (result.timed_out && release.signal != 0 && !release.ack.empty()) {
        kill(-pid, release.signal);
        if (await_release_ack(pipefd[0], release, result.output, max_output)) {
            // Its own now: not waited for, not killed. Its supervisor, orphaned when the caller
            // exits, is reaped by init.
            ::close(pipefd[0]);
            result.timed_out = false;
            result.released = true;
            while (!result.output.empty() && (result.output.back() == '\n' || result.output.back() == '\r'))
                result.output.pop_back();
            return result;
        }
    }
    ::close(pipefd[0]);
    // EOF on the pipe means the helper closed its stdout, not that it exited: bound the wait too.
    bool reaped = false;
    if (!result.timed_out) {
        const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
        reaped = reap_within(pid, result.wait_status, std::max(0.0, left));
        result.timed_out = !reaped;
    }
    if (!reaped) {
        // The supervisor dies of SIGKILL at once whatever the helper's state; should even it
        // not within the grace, it is left as it is rather than hang the caller.
        kill(-pid, SIGKILL);
        if (!reap_within(pid, result.wait_status, kKillGraceSeconds)) result.wait_status = 0;
    }
    while (!result.output.empty() && (result.output.back() == '\n' || result.output.back() == '\r')) result.output.pop_back();
    return result;
}

}  // namespace acme::util
