// A real HttpApi (the daemon's) on a temp socket, in a child process of its own so what it
// holds (memory, descriptors, log lines) is measured alone; clients are plain sockets writing
// the bytes a hostile client would (issue 16).
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <cerrno>
#include <cstdio>

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>

#include "evalsched/daemon/api/http_api.hpp"
#include "evalsched/store/schema.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme::evalsched;

namespace {

class Server {
public:
    // Starts an evalschedd HttpApi on <dir>/api.sock; `nofile` > 0 caps its descriptors.
    Server(const acme::test::TempDir& dir, DaemonConfig config, int nofile = 0) : log_(dir.file("daemon.log")) {
        config.socket = dir.file("api.sock");
        config.database = dir.file("e.db");
        config.results_dir = dir.file("results");
        socket_ = config.socket;
        chmod(dir.path().c_str(), 0755);  // other uids reach the socket (0666) too
        int ready[2];
        REQUIRE(pipe(ready) == 0);
        pid_ = fork();
        REQUIRE(pid_ >= 0);
        if (pid_ == 0) {
            close(ready[0]);
            const int log = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            dup2(log, 2);
            std::signal(SIGPIPE, SIG_IGN);
            try {
                event_base* base = event_base_new();
                HttpApi api(base, config, acme::store::open_evalsched_store(config.database),
                            acme::store::open_evalsched_store(config.database), [] {});
                api.listen();
                if (nofile > 0) {
                    rlimit r{static_cast<rlim_t>(nofile), static_cast<rlim_t>(nofile)};
                    setrlimit(RLIMIT_NOFILE, &r);
                }
                [[maybe_unused]] auto n = write(ready[1], "r", 1);
                event_base_dispatch(base);
            } catch (const std::exception& e) {
                fprintf(stderr, "server: %s\n", e.what());
            }
            _exit(0);
        }
        close(ready[1]);
        char c = 0;
        REQUIRE(read(ready[0], &c, 1) == 1);
        close(ready[0]);
    }
    ~Server() {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
    // Peak resident memory, kB (VmHWM).
    long peak_kb() const {
        std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
        std::string line;
        while (std::getline(in, line))
            if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
        return -1;
    }
    int log_lines_with(const std::string& word) const {
        std::ifstream in(log_);
        std::string line;
        int n = 0;
        while (std::getline(in, line)) n += line.find(word) != std::string::npos;
        return n;
    }
    int connect() const {
        const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket_.c_str());
        if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
            close(fd);
            return -1;
        }
        return fd;
    }

private:
    std::string log_, socket_;
    pid_t pid_ = -1;
};

// Everything the server sends until it closes or `wait_s` passes; nullopt when still open then.
std::optional<std::string> read_until_closed(int fd, double wait_s) {
    std::string out;
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now()).count();
        if (left <= 0) return std::nullopt;
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
        char buf[4096];
        const ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0) return out;
        out.append(buf, static_cast<std::size_t>(n));
    }
}

// One GET with Connection: close; the whole answer ("" when refused without one).
std::string get(int fd, const std::string& path) {
    const std::string req = "GET " + path + " HTTP/1.1\r\nHost: evalschedd\r\nConnection: close\r\n\r\n";
    [[maybe_unused]] auto n = send(fd, req.data(), req.size(), MSG_NOSIGNAL);
    return read_until_closed(fd, 10).value_or("still open after 10 s");
}

// Runs `body` as another uid in a child; its exit status.
template <typename F>
int as_uid(uid_t uid, F body) {
    const pid_t pid = fork();
    if (pid == 0) {
        if (setgroups(0, nullptr) != 0 || setgid(uid) != 0 || setuid(uid) != 0) _exit(99);
        _exit(body());
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("a 4 MiB header is refused without the daemon growing") {
    acme::test::TempDir dir;
    Server server(dir, DaemonConfig{});
    {
        const int fd = server.connect();
        CHECK(get(fd, "/v1/health").find("200 OK") != std::string::npos);
        close(fd);
    }
    const long before = server.peak_kb();
    const int fd = server.connect();
    std::string req = "GET /v1/health HTTP/1.1\r\nHost: evalschedd\r\nX-Big: ";
    req.append(4 << 20, 'a');
    req += "\r\nConnection: close\r\n\r\n";
    // Non-blocking: the daemon may close before reading it all.
    fcntl(fd, F_SETFL, O_NONBLOCK);
    std::size_t sent = 0;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (sent < req.size() && std::chrono::steady_clock::now() < end) {
        const ssize_t n = send(fd, req.data() + sent, req.size() - sent, MSG_NOSIGNAL);
        if (n > 0) sent += static_cast<std::size_t>(n);
        else if (errno == EAGAIN) {
            pollfd p{fd, POLLOUT, 0};
            poll(&p, 1, 100);
        } else break;
    }
    fcntl(fd, F_SETFL, 0);
    const auto answer = read_until_closed(fd, 10);
    close(fd);
    REQUIRE(answer);
    CHECK(answer->find("200 OK") == std::string::npos);
    const long after = server.peak_kb();
    INFO("peak RSS before " << before << " kB, after " << after << " kB");
    CHECK(after - before < 2048);
}

TEST_CASE("idle and slowloris connections are closed after request_timeout") {
    acme::test::TempDir dir;
    DaemonConfig config;
    config.request_timeout_s = 1;
    Server server(dir, config);
    const int idle = server.connect();
    CHECK(read_until_closed(idle, 10));
    close(idle);
    // One byte every 0.3 s: every read is within the timeout, the request never is.
    const int slow = server.connect();
    const std::string head = "GET /v1/health HTTP/1.1\r\nHost: evalschedd\r\nX-Slow: ";
    send(slow, head.data(), head.size(), MSG_NOSIGNAL);
    bool closed = false;
    for (int i = 0; i < 30 && !closed; ++i) {
        closed = send(slow, "a", 1, MSG_NOSIGNAL) != 1;
        pollfd p{slow, POLLIN, 0};
        if (poll(&p, 1, 300) > 0) closed = true;
    }
    CHECK(closed);
    close(slow);
    // The daemon still answers.
    const int fd = server.connect();
    CHECK(get(fd, "/v1/health").find("200 OK") != std::string::npos);
    close(fd);
}

TEST_CASE("max_connections_per_user: the extra connection is refused, another uid still answers") {
    acme::test::TempDir dir;
    DaemonConfig config;
    config.max_connections_per_user = 4;
    Server server(dir, config);
    std::vector<int> held;
    for (int i = 0; i < 4; ++i) held.push_back(server.connect());
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // all four accepted
    const int extra = server.connect();
    const std::string refused = get(extra, "/v1/health");
    close(extra);
    CHECK(refused.find("503") != std::string::npos);
    CHECK(refused.find("max_connections_per_user") != std::string::npos);
    // nobody is another uid: its own allowance.
    const int other = as_uid(65534, [&] {
        const int fd = server.connect();
        return get(fd, "/v1/health").find("200 OK") != std::string::npos ? 0 : 1;
    });
    CHECK(other == 0);
    // One closed, one more admitted.
    close(held.back());
    held.pop_back();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const int again = server.connect();
    CHECK(get(again, "/v1/health").find("200 OK") != std::string::npos);
    close(again);
    for (int fd : held) close(fd);
}

TEST_CASE("out of descriptors, the daemon pauses accepting and logs a line, not a flood") {
    acme::test::TempDir dir;
    DaemonConfig config;
    config.max_connections_per_user = 1000;
    Server server(dir, config, 48);
    std::vector<int> held;
    for (int i = 0; i < 120; ++i)
        if (int fd = server.connect(); fd >= 0) held.push_back(fd);
    std::this_thread::sleep_for(std::chrono::seconds(2));
    const int accept_lines = server.log_lines_with("accept");
    INFO("lines naming accept: " << accept_lines);
    CHECK(accept_lines >= 1);
    CHECK(accept_lines < 10);
    for (int fd : held) close(fd);
    // Descriptors free again: a new client is answered once the pause is over.
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    const int fd = server.connect();
    CHECK(get(fd, "/v1/health").find("200 OK") != std::string::npos);
    close(fd);
}
