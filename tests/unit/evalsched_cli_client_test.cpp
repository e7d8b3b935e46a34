// The CLI's client against real Unix sockets in a temporary directory: no socket, a socket
// nobody listens on, a listener that never answers, and a one-shot server thread that answers
// a canned reply (chunked, too large, an API error). Each failure is one line a user can act on.
#include <doctest/doctest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

#include "evalsched/cli/client.hpp"

using namespace acme::evalsched;
namespace fs = std::filesystem;

namespace {

struct TempDir {
    fs::path path;
    TempDir() {
        char tmpl[] = "/tmp/acme-cli-client.XXXXXX";
        REQUIRE(mkdtemp(tmpl) != nullptr);
        path = tmpl;
    }
    ~TempDir() { fs::remove_all(path); }
};

// A Unix socket bound at `path`; listening unless `listen_too` is false.
int bound_socket(const fs::path& path, bool listen_too = true) {
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
    REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    if (listen_too) REQUIRE(listen(fd, 4) == 0);
    return fd;
}

// Accepts one connection, reads the request's head, writes `reply`, closes; the request's first
// line goes to `*request_line`.
std::thread answer_once(int fd, std::string reply, std::string* request_line) {
    return std::thread([fd, reply = std::move(reply), request_line] {
        const int c = accept(fd, nullptr, nullptr);
        if (c < 0) return;
        std::string got;
        char buf[4096];
        while (got.find("\r\n\r\n") == std::string::npos) {
            const ssize_t n = read(c, buf, sizeof buf);
            if (n <= 0) break;
            got.append(buf, static_cast<std::size_t>(n));
        }
        *request_line = got.substr(0, got.find("\r\n"));
        for (std::size_t sent = 0; sent < reply.size();) {
            const ssize_t n = write(c, reply.data() + sent, reply.size() - sent);
            if (n <= 0) break;
            sent += static_cast<std::size_t>(n);
        }
        close(c);
    });
}

std::string failure(const std::function<void()>& f) {
    try {
        f();
    } catch (const DaemonUnreachable& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("no socket: the daemon is not running, start it or pass --socket") {
    TempDir d;
    const std::string why = failure([&] { call((d.path / "none.sock").string(), "GET", "/v1/evaluations"); });
    CHECK(why.find("evalschedd is not running at " + (d.path / "none.sock").string() + " (no such socket)") != std::string::npos);
    CHECK(why.find("systemctl start evalschedd") != std::string::npos);
}

TEST_CASE("a socket nobody listens on: not running") {
    TempDir d;
    const fs::path p = d.path / "stale.sock";
    const int fd = bound_socket(p, false);
    const std::string why = failure([&] { call(p.string(), "GET", "/v1/evaluations"); });
    close(fd);
    CHECK(why.find("evalschedd is not running at " + p.string()) != std::string::npos);
}

TEST_CASE("a daemon that never answers: one line after the timeout, not a hang") {
    TempDir d;
    const fs::path p = d.path / "mute.sock";
    const int fd = bound_socket(p);  // accepted by the kernel, never read
    const std::string why = failure([&] { call(p.string(), "GET", "/v1/evaluations/1", {}, CallLimits{200, 1 << 20}); });
    close(fd);
    CHECK(why.find("gave no complete answer within 0.2 s") != std::string::npos);
    CHECK(why.find('\n') == std::string::npos);
}

TEST_CASE("a chunked answer is read whole; the request names the path, percent-encoded") {
    TempDir d;
    const fs::path p = d.path / "ok.sock";
    const int fd = bound_socket(p);
    std::string line;
    auto server = answer_once(fd,
                              "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                              "4\r\n{\"a\"\r\n3\r\n:1}\r\n0\r\n\r\n",
                              &line);
    const Response r = call(p.string(), "GET", "/v1/report/run 7");
    server.join();
    close(fd);
    CHECK(r.status == 200);
    CHECK(r.body == nlohmann::json{{"a", 1}});
    CHECK(line == "GET /v1/report/run%207 HTTP/1.1");
}

TEST_CASE("an answer past the cap: refused by name, never parsed in part") {
    TempDir d;
    const fs::path p = d.path / "big.sock";
    const int fd = bound_socket(p);
    std::string line;
    const std::string body = "[" + std::string(5000, ' ') + "]";
    auto server = answer_once(fd, "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body, &line);
    const std::string why = failure([&] { call(p.string(), "GET", "/v1/evaluations", {}, CallLimits{5000, 1000}); });
    server.join();
    close(fd);
    CHECK(why.find("answered more than 1000 bytes") != std::string::npos);
}

TEST_CASE("an answer cut short of its Content-Length is an error, not a shorter answer") {
    TempDir d;
    const fs::path p = d.path / "cut.sock";
    const int fd = bound_socket(p);
    std::string line;
    auto server = answer_once(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"a\":1}", &line);
    const std::string why = failure([&] { call(p.string(), "GET", "/v1/evaluations"); });
    server.join();
    close(fd);
    CHECK(why.find("gave no complete answer") != std::string::npos);
}

TEST_CASE("an API error: the daemon's own line; a status without one: the status") {
    TempDir d;
    const fs::path p = d.path / "err.sock";
    const int fd = bound_socket(p);
    std::string line;
    const std::string body = R"({"error":"no such evaluation 9: see evalsched status"})";
    auto server = answer_once(fd, "HTTP/1.1 404 Not Found\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body, &line);
    const Response r = call(p.string(), "POST", "/v1/evaluations/9/cancel");
    server.join();
    close(fd);
    CHECK(line == "POST /v1/evaluations/9/cancel HTTP/1.1");
    CHECK(r.error() == "no such evaluation 9: see evalsched status");
    CHECK(parse_answer(502, "<html>bad gateway</html>").error() == "evalschedd answered HTTP 502");
    CHECK(parse_answer(200, "{}").error().empty());
}
