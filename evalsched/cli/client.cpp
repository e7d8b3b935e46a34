#include "evalsched/cli/client.hpp"

#include <cerrno>
#include <cstring>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/format.h>

namespace acme::evalsched {

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
    timeval tv{60, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string request = fmt::format("{} {} HTTP/1.0\r\nHost: evalschedd\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                                      method, path, body.size());
    request += body;
    for (std::size_t sent = 0; sent < request.size();) {
        const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) {
            close(fd);
            throw DaemonUnreachable(fmt::format("evalschedd at {} closed the connection: see its log", socket_path));
        }
        sent += static_cast<std::size_t>(n);
    }
    std::string answer;
    char buf[65536];
    for (;;) {
        const ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        answer.append(buf, static_cast<std::size_t>(n));
    }
    close(fd);
    Response r;
    // "HTTP/1.1 200 OK\r\n...\r\n\r\n{json}"
    if (answer.rfind("HTTP/1.", 0) != 0 || answer.size() < 12)
        throw DaemonUnreachable(fmt::format("evalschedd at {} gave no HTTP answer: see its log", socket_path));
    r.status = std::atoi(answer.c_str() + 9);
    const auto split = answer.find("\r\n\r\n");
    const std::string payload = split == std::string::npos ? "" : answer.substr(split + 4);
    r.body = nlohmann::json::parse(payload, nullptr, false);
    if (r.body.is_discarded()) r.body = nullptr;
    return r;
}

}  // namespace acme::evalsched
