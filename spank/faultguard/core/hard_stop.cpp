#include "spank/faultguard/core/hard_stop.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace acme::faultguard {
namespace {

// What the handler writes: set with SIGALRM blocked, read only by the handler.
char g_line[1024];
volatile sig_atomic_t g_length = 0;
volatile sig_atomic_t g_exit_code = 1;
const PreparedExec* volatile g_then = nullptr;

void on_alarm(int) {
    const char* p = g_line;
    auto left = static_cast<size_t>(g_length);
    while (left > 0) {
        const ssize_t n = ::write(STDERR_FILENO, p, left);
        if (n <= 0) break;
        p += n;
        left -= static_cast<size_t>(n);
    }
    if (const PreparedExec* then = g_then) then->start();
    _exit(g_exit_code);
}

}  // namespace

void arm_hard_stop(unsigned seconds, std::string_view line, int exit_code, const PreparedExec* then) noexcept {
    sigset_t alarm_only, before;
    sigemptyset(&alarm_only);
    sigaddset(&alarm_only, SIGALRM);
    sigprocmask(SIG_BLOCK, &alarm_only, &before);
    alarm(0);
    const size_t n = std::min(line.size(), sizeof g_line);
    std::memcpy(g_line, line.data(), n);
    g_length = static_cast<sig_atomic_t>(n);
    g_exit_code = exit_code;
    g_then = then;
    struct sigaction sa {};
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, nullptr);
    alarm(seconds);
    // A process started from another's stop (PreparedExec) inherits the handler's mask, SIGALRM
    // blocked: its own stop must still come.
    sigdelset(&before, SIGALRM);
    sigprocmask(SIG_SETMASK, &before, nullptr);
}

}  // namespace acme::faultguard
