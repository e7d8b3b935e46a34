#include "common/util/line_read.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

namespace acme::util {

namespace {

int ms_left(SteadyTime deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    return left > 0 ? static_cast<int>(left) : 0;
}

}  // namespace

bool wait_fd(int fd, short events, SteadyTime deadline) {
    for (;;) {
        pollfd p{fd, events, 0};
        const int rc = poll(&p, 1, ms_left(deadline));
        if (rc > 0) return true;
        if (rc == 0 || errno != EINTR) return false;
    }
}

LineRead read_line(int fd, std::size_t max_bytes, SteadyTime deadline, std::string& line, int& error) {
    line.clear();
    error = 0;
    char buf[512];
    for (;;) {
        if (!wait_fd(fd, POLLIN, deadline)) return LineRead::timeout;
        const auto n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
        if (n < 0) {
            error = errno;
            return LineRead::failed;
        }
        if (n == 0) return LineRead::closed;
        line.append(buf, static_cast<std::size_t>(n));
        if (const auto nl = line.find('\n'); nl != std::string::npos && nl <= max_bytes) {
            line.resize(nl);
            return LineRead::line;
        }
        if (line.size() > max_bytes) return LineRead::too_long;
    }
}

}  // namespace acme::util
