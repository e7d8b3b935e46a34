// The bounded HTTP GET client, against real sockets on 127.0.0.1: a port nobody listens on, a
// listener that never answers, and a tiny server thread that answers one canned reply.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "common/util/http_get.hpp"

using acme::util::HttpClient;
using acme::util::HttpLimits;
using acme::util::parse_http_url;

namespace {

// A listening socket on an ephemeral port of 127.0.0.1.
struct Listener {
    int fd = -1;
    int port = 0;
    Listener() {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
        REQUIRE(listen(fd, 4) == 0);
        socklen_t len = sizeof a;
        getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
        port = ntohs(a.sin_port);
    }
    ~Listener() {
        if (fd >= 0) close(fd);
    }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
};

// Accepts one connection, reads the request head, records it, writes `reply`, closes.
std::thread serve_once(const Listener& l, std::string reply, std::string& request) {
    return std::thread([fd = l.fd, reply = std::move(reply), &request] {
        const int c = accept(fd, nullptr, nullptr);
        if (c < 0) return;
        char buf[4096];
        while (request.find("\r\n\r\n") == std::string::npos) {
            const ssize_t n = read(c, buf, sizeof buf);
            if (n <= 0) break;
            request.append(buf, static_cast<size_t>(n));
        }
        (void)!write(c, reply.data(), reply.size());
        close(c);
    });
}

}  // namespace

TEST_CASE("http URLs: host, port, path prefix; anything else is refused with a reason") {
    std::string error;
    auto u = parse_http_url("http://prom.example:9090/prometheus/", error);
    REQUIRE(u);
    CHECK(u->host == "prom.example");
    CHECK(u->port == 9090);
    CHECK(u->path == "/prometheus");
    CHECK(u->text == "http://prom.example:9090/prometheus/");
    u = parse_http_url("http://10.0.0.5", error);
    REQUIRE(u);
    CHECK(u->port == 80);
    CHECK(u->path == "");
    u = parse_http_url("http://[::1]:9090", error);
    REQUIRE(u);
    CHECK(u->host == "::1");
    for (const char* bad : {"foo", "", "prom:9090", "ftp://x/", "http://", "http://x:0", "http://x:99999", "http://u@x/",
                            "http://x/?q=1", "http://x/#f"}) {
        CAPTURE(bad);
        CHECK_FALSE(parse_http_url(bad, error));
        CHECK_FALSE(error.empty());
    }
    CHECK_FALSE(parse_http_url("https://prom:9090", error));
    CHECK(error == "https is not supported (plain http:// only)");
    CHECK_FALSE(parse_http_url("foo", error));
    CHECK(error == "not an http:// URL");
}

TEST_CASE("a port nobody listens on: connection refused, at once") {
    int port = 0;
    {
        Listener l;
        port = l.port;
    }  // closed: nothing listens there now
    std::string error;
    HttpClient client(*parse_http_url("http://127.0.0.1:" + std::to_string(port), error));
    const auto r = client.get("/api/v1/query?query=up");
    CHECK(r.status == 0);
    CHECK(r.error == "connection refused");
}

TEST_CASE("a server that accepts and never answers costs the timeout, then an error") {
    Listener l;  // the kernel completes the handshake; nobody reads or writes
    std::string error;
    HttpLimits limits;
    limits.timeout_s = 0.3;
    HttpClient client(*parse_http_url(l.url(), error), limits);
    const auto r = client.get("/");
    CHECK(r.status == 0);
    CHECK(r.error == "no answer within 0.3 s");
}

TEST_CASE("a reply: status and body; the request carries the path prefix and Host") {
    Listener l;
    std::string request;
    auto server = serve_once(l, "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: 18\r\n\r\n{\"status\":\"error\"}", request);
    std::string error;
    HttpClient client(*parse_http_url(l.url() + "/prom/", error));
    const auto r = client.get("/api/v1/query?query=up");
    server.join();
    CHECK(r.error == "");
    CHECK(r.status == 400);
    CHECK(r.body == "{\"status\":\"error\"}");
    CHECK(request.starts_with("GET /prom/api/v1/query?query=up HTTP/1.1\r\n"));
    CHECK(request.find("Host: 127.0.0.1:" + std::to_string(l.port) + "\r\n") != std::string::npos);
}

TEST_CASE("a body over the limit is an error, not a truncated answer") {
    Listener l;
    std::string request;
    const std::string body(5000, 'x');
    auto server = serve_once(l, "HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n" + body, request);
    std::string error;
    HttpLimits limits;
    limits.max_body = 1000;
    HttpClient client(*parse_http_url(l.url(), error), limits);
    const auto r = client.get("/");
    server.join();
    CHECK(r.status == 0);
    CHECK(r.body.empty());
    CHECK(r.error == "answer larger than 1000 bytes");
}

TEST_CASE("garbage instead of HTTP is an error") {
    Listener l;
    std::string request;
    auto server = serve_once(l, "SSH-2.0-OpenSSH\r\n\r\n", request);
    std::string error;
    HttpClient client(*parse_http_url(l.url(), error));
    const auto r = client.get("/");
    server.join();
    CHECK(r.status == 0);
    CHECK_FALSE(r.error.empty());
}

// (The write that follows a reset could raise SIGPIPE; http_get holds it blocked. This run may
// or may not reach that write: it shows the error, and that the process lives on.)
TEST_CASE("a server that resets the connection while the request is being written: an error") {
    Listener l;
    std::thread server([fd = l.fd] {
        const int c = accept(fd, nullptr, nullptr);
        if (c < 0) return;
        // Closing with unread data sends RST: the client's next writes fail with EPIPE.
        char buf[1024];
        (void)!read(c, buf, sizeof buf);
        close(c);
    });
    std::string error;
    HttpClient client(*parse_http_url(l.url(), error));
    const auto r = client.get("/" + std::string(8u << 20, 'a'));  // far more than a socket buffer
    server.join();
    CHECK(r.status == 0);
    CHECK_FALSE(r.error.empty());
}
