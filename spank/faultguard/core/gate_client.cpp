#include "spank/faultguard/core/gate_client.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

namespace acme::faultguard {

namespace {

using Clock = std::chrono::steady_clock;

int ms_left(Clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return left > 0 ? static_cast<int>(left) : 0;
}

// Waits for `events` on fd until the deadline; false on timeout or error.
bool wait_for(int fd, short events, Clock::time_point deadline) {
    for (;;) {
        pollfd p{fd, events, 0};
        const int rc = poll(&p, 1, ms_left(deadline));
        if (rc > 0) return true;
        if (rc == 0 || errno != EINTR) return false;
    }
}

struct Fd {
    int fd;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

}  // namespace

GateReply ask_resident_gate(const std::string& socket_path, const std::string& request, double timeout_s,
                            GateAnswer& answer, std::string& why) {
    const auto deadline = Clock::now() + std::chrono::microseconds(static_cast<long long>(timeout_s * 1e6));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (socket_path.size() >= sizeof addr.sun_path) {
        why = "socket path too long";
        return GateReply::failed;
    }
    std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
    Fd s{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)};
    if (s.fd < 0) {
        why = fmt::format("socket: {}", std::strerror(errno));
        return GateReply::failed;
    }
    if (::connect(s.fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        if (errno == ENOENT || errno == ECONNREFUSED) return GateReply::absent;
        // EAGAIN: a Unix socket's backlog is full (the gate is busy or hung): not waited for.
        why = fmt::format("connect: {}", std::strerror(errno));
        return GateReply::failed;
    }
    for (std::size_t sent = 0; sent < request.size();) {
        if (!wait_for(s.fd, POLLOUT, deadline)) {
            why = "no room to send within the time";
            return GateReply::failed;
        }
        const auto n = ::send(s.fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno != EAGAIN && errno != EINTR) {
            why = fmt::format("send: {}", std::strerror(errno));
            return GateReply::failed;
        }
        if (n > 0) sent += static_cast<std::size_t>(n);
    }
    std::string line;
    char buf[512];
    for (;;) {
        if (!wait_for(s.fd, POLLIN, deadline)) {
            why = "no answer within the time";
            return GateReply::failed;
        }
        const auto n = ::recv(s.fd, buf, sizeof buf, 0);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (n <= 0) {
            why = n == 0 ? "closed without an answer" : fmt::format("recv: {}", std::strerror(errno));
            return GateReply::failed;
        }
        line.append(buf, static_cast<std::size_t>(n));
        if (const auto nl = line.find('\n'); nl != std::string::npos) {
            line.resize(nl);
            break;
        }
        if (line.size() > kGateLineMax) {
            why = "answer too long";
            return GateReply::failed;
        }
    }
    auto parsed = parse_gate_answer(line);
    if (!parsed) {
        why = "not an answer";
        return GateReply::failed;
    }
    answer = std::move(*parsed);
    return GateReply::answered;
}

}  // namespace acme::faultguard
