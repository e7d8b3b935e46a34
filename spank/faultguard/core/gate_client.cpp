#include "spank/faultguard/core/gate_client.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "common/util/fd.hpp"
#include "common/util/line_read.hpp"

namespace acme::faultguard {

using util::Fd;
using Clock = std::chrono::steady_clock;

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
        if (!util::wait_fd(s.fd, POLLOUT, deadline)) {
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
    int error = 0;
    switch (util::read_line(s.fd, kGateLineMax, deadline, line, error)) {
        case util::LineRead::line: break;
        case util::LineRead::timeout: why = "no answer within the time"; return GateReply::failed;
        case util::LineRead::closed: why = "closed without an answer"; return GateReply::failed;
        case util::LineRead::too_long: why = "answer too long"; return GateReply::failed;
        case util::LineRead::failed: why = fmt::format("recv: {}", std::strerror(error)); return GateReply::failed;
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
