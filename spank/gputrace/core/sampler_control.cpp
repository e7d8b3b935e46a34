#include "spank/gputrace/core/sampler_control.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "common/util/parse.hpp"
#include "spank/gputrace/core/sampler_wait_c.h"

namespace acme::telemetry {
namespace {

std::string read_small(const std::string& path, int flags = 0) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | flags);
    if (fd < 0) return {};
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    ::close(fd);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

// Alive and not a zombie (a zombie answers kill(pid, 0) until its parent reaps it).
bool alive(long pid) {
    if (kill(static_cast<pid_t>(pid), 0) != 0) return false;
    const auto stat = read_small(fmt::format("/proc/{}/stat", pid));
    const auto paren = stat.rfind(')');
    return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] != 'Z';
}

}  // namespace

bool is_sampler_of(long pid, long long job_id) {
    const auto cmdline = read_small(fmt::format("/proc/{}/cmdline", pid));
    const auto argv0_end = cmdline.find('\0');
    if (argv0_end == std::string::npos) return false;
    const std::string_view argv0(cmdline.data(), argv0_end);
    if (!argv0.ends_with("acme-gpu-sampler")) return false;
    const std::string job_arg = fmt::format("--job{}{}{}", '\0', job_id, '\0');
    return cmdline.find(job_arg) != std::string::npos;
}

bool is_pidfile_process(long pid, std::string_view start_ticks, const std::string& proc_root) {
    const auto want = util::parse_int(start_ticks);
    unsigned long long start = 0;
    return want && *want >= 0 && acme_proc_start_time(proc_root.c_str(), pid, &start) == 0 &&
           start == static_cast<unsigned long long>(*want);
}

StopResult stop_sampler(const std::string& pidfile, long long job_id, double timeout_s) {
    auto text = read_small(pidfile, O_NOFOLLOW);
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    // "PID" (a sampler's own), or "PID START" (its start time: what the prolog wrote for its
    // detached child, sampler_spawn_c.h, which waits for the job's start, executes
    // acme-gpu-sampler-start and then the sampler, one pid throughout).
    const auto space = text.find(' ');
    const auto pid = util::parse_int(text.substr(0, space));
    const bool ours = pid && *pid > 1 && alive(*pid) &&
                      (is_sampler_of(*pid, job_id) ||
                       (space != std::string::npos && is_pidfile_process(*pid, std::string_view(text).substr(space + 1))));
    if (!ours) {
        unlink(pidfile.c_str());
        return StopResult::not_running;
    }
    // A pidfd says the moment the sampler exits (the epilog holds the node until then); a
    // kernel without pidfd_open (before 5.3) gets the 20 ms poll.
    const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, static_cast<pid_t>(*pid), 0));
    kill(static_cast<pid_t>(*pid), SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (std::chrono::steady_clock::now() < deadline) {
        if (!alive(*pid)) {
            if (pidfd >= 0) close(pidfd);
            // The sampler removes its own; the prolog's child or acme-gpu-sampler-start, stopped
            // before it became the sampler or when it started none, leaves it.
            unlink(pidfile.c_str());
            return StopResult::stopped;
        }
        if (pidfd >= 0) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            pollfd p{pidfd, POLLIN, 0};
            poll(&p, 1, static_cast<int>(std::max<long long>(1, left.count())));
        } else {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }
    if (pidfd >= 0) close(pidfd);
    kill(static_cast<pid_t>(*pid), SIGKILL);
    unlink(pidfile.c_str());
    return StopResult::killed;
}

}  // namespace acme::telemetry
