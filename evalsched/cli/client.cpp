#include "evalsched/cli/client.hpp"

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/format.h>

namespace acme::evalsched {

std::optional<std::string> dechunk(std::string_view in) {
    std::string out;
    std::size_t at = 0;
    for (;;) {
        const auto eol = in.find("\r\n", at);
        if (eol == std::string_view::npos) return std::nullopt;
        const std::string size_text(in.substr(at, eol - at));
        char* end = nullptr;
        const unsigned long long size = std::strtoull(size_text.c_str(), &end, 16);
        if (end == size_text.c_str()) return std::nullopt;
        at = eol + 2;
        if (size == 0) return out;
        if (size > in.size() - at || in.size() - at - size < 2 || in.substr(at + size, 2) != "\r\n") return std::nullopt;
        out.append(in.substr(at, size));
        at += size + 2;
    }
}

std::string Response::error() const {
    if (status < 400) return {};
    if (body.is_object() && body.contains("error") && body["error"].is_string()) return body["error"].get<std::string>();
    return fmt::format("evalschedd answered HTTP {}", status);
}

Response call(const std::string& socket_path, const std::string& method, const std::string& path, const std::string& body) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (socket_path.size() >= sizeof addr.sun_path) throw DaemonUnreachable(fmt::format("socket path {} is too long", socket_path));
    std::strcpy(addr.sun_path, socket_path.c_str());
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw DaemonUnreachable(fmt::format("socket: {}", strerror(errno)));
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        const int err = errno;
        close(fd);
        throw DaemonUnreachable(fmt::format("evalschedd is not running at {} ({}): start it (systemctl start evalschedd) or pass --socket",
                                            socket_path, strerror(err)));
    }
    // One deadline for the whole exchange: a daemon that trickles bytes cannot hold the command.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kTimeoutS);
    auto timed_out = [&] {
        close(fd);
        return DaemonUnreachable(fmt::format("evalschedd at {} gave no complete answer within {} s: see its log", socket_path, kTimeoutS));
    };
    auto wait_for = [&](short events) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
        if (left <= 0) return false;
        pollfd p{fd, events, 0};
        int n;
        while ((n = poll(&p, 1, static_cast<int>(left))) < 0 && errno == EINTR) {}
        return n > 0;
    };
    std::string request = fmt::format("{} {} HTTP/1.1\r\nHost: evalschedd\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                                      method, path, body.size());
    request += body;
    for (std::size_t sent = 0; sent < request.size();) {
        if (!wait_for(POLLOUT)) throw timed_out();
        const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) {
            close(fd);
            throw DaemonUnreachable(fmt::format("evalschedd at {} closed the connection: see its log", socket_path));
        }
        sent += static_cast<std::size_t>(n);
    }
    std::string answer;
    char buf[65536];
    for (;;) {
        if (!wait_for(POLLIN)) throw timed_out();
        const ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) break;
        if (answer.size() + static_cast<std::size_t>(n) > kMaxAnswer) {
            close(fd);
            throw DaemonUnreachable(fmt::format("evalschedd at {} answered more than {} bytes: see its log", socket_path, kMaxAnswer));
        }
        answer.append(buf, static_cast<std::size_t>(n));
    }
    close(fd);
    Response r;
    if (answer.rfind("HTTP/1.", 0) != 0 || answer.size() < 12)
        throw DaemonUnreachable(fmt::format("evalschedd at {} gave no HTTP answer: see its log", socket_path));
    r.status = std::atoi(answer.c_str() + 9);
    const auto split = answer.find("\r\n\r\n");
    if (split == std::string::npos) throw DaemonUnreachable(fmt::format("evalschedd at {} gave an incomplete answer: see its log", socket_path));
    std::string headers = answer.substr(0, split);
    for (auto& c : headers) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string payload = answer.substr(split + 4);
    if (headers.find("\r\ntransfer-encoding: chunked") != std::string::npos) {
        auto decoded = dechunk(payload);
        if (!decoded) throw DaemonUnreachable(fmt::format("evalschedd at {} gave an incomplete chunked answer: see its log", socket_path));
        payload = std::move(*decoded);
    } else if (const auto at = headers.find("\r\ncontent-length:"); at != std::string::npos) {
        const unsigned long long length = std::strtoull(headers.c_str() + at + 17, nullptr, 10);
        // Never parse part of an answer as if it were all of it.
        if (payload.size() < length) throw DaemonUnreachable(fmt::format("evalschedd at {} gave an incomplete answer: see its log", socket_path));
        payload.resize(length);
    }
    r.body = nlohmann::json::parse(payload, nullptr, false);
    if (r.body.is_discarded()) r.body = nullptr;
    return r;
}

}  // namespace acme::evalsched
