#include "evalsched/daemon/sched/pilot_steps.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <thread>

#include <fmt/format.h>

namespace acme::evalsched {

StepRunner::StepRunner(std::function<void()> wake) : shared_(std::make_shared<Shared>()) { shared_->wake = std::move(wake); }

namespace {
// In the forked child: only async-signal-safe calls from here to execve (the daemon has threads).
[[noreturn]] void run_step(const StepLaunch& l, char* const* argv, char* const* envp, const char* dir, const char* output) {
    // Its own process group: a signal meant for the daemon's group never reaches the steps.
    setpgid(0, 0);
    // The daemon's database, socket and clients stay out of a process the user owns.
    if (close_range(3, ~0U, 0) != 0)
        for (int fd = 3; fd < 65536; ++fd) close(fd);
    if (geteuid() == 0 && (setgroups(l.who.groups.size(), l.who.groups.data()) != 0 || setresgid(l.who.gid, l.who.gid, l.who.gid) != 0 ||
                           setresuid(l.who.uid, l.who.uid, l.who.uid) != 0))
        _exit(kStepCannotBecomeUser);
    // From here on the user: whatever the user put at these paths, it is opened with the user's rights.
    const int in = open("/dev/null", O_RDONLY);
    if (in >= 0 && in != 0) {
        dup2(in, 0);
        close(in);
    }
    int out = -1;
    const int dfd = (mkdir(dir, 0750) == 0 || errno == EEXIST) ? open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW) : -1;
    if (dfd >= 0) {
        out = openat(dfd, output, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK, 0640);
        close(dfd);
    }
    if (out < 0) out = open("/dev/null", O_WRONLY);
    if (out >= 0) {
        // O_NONBLOCK was only for the open (a FIFO planted there must not hang the child).
        fcntl(out, F_SETFL, fcntl(out, F_GETFL) & ~O_NONBLOCK);
        dup2(out, 1);
        dup2(out, 2);
        if (out > 2) close(out);
    }
    execve(argv[0], argv, envp);
    // strerror may take the locale's lock: the number, written by hand.
    char line[96] = "evalschedd: cannot exec the step's srun: errno ";
    std::size_t n = strlen(line);
    char digits[12];
    std::size_t d = 0;
    for (unsigned v = static_cast<unsigned>(errno); d == 0 || v > 0; v /= 10) digits[d++] = static_cast<char>('0' + v % 10);
    while (d > 0) line[n++] = digits[--d];
    line[n++] = '\n';
    write_all(2, line, n);
    _exit(kStepCannotExec);
}
}  // namespace

bool StepRunner::start(std::int64_t attempt, const StepLaunch& launch, std::string& error) {
    if (launch.argv.empty() || launch.argv[0].empty() || launch.argv[0][0] != '/') {
        error = "the step's program is not an absolute path";
        return false;
    }
    // Everything the child touches is built before fork.
    std::vector<char*> av, ev;
    for (const auto& a : launch.argv) av.push_back(const_cast<char*>(a.c_str()));
    av.push_back(nullptr);
    for (const auto& e : launch.env) ev.push_back(const_cast<char*>(e.c_str()));
    ev.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0) run_step(launch, av.data(), ev.data(), launch.dir.c_str(), launch.output.c_str());
    if (pid < 0) {
        error = fmt::format("cannot fork for {}: {}", launch.argv[0], std::strerror(errno));
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
