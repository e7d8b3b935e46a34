// libFuzzer target for evalschedd's HTTP layer: each input is the raw bytes a client writes
// on one connection (request line, headers, body, or garbage), sent to the daemon's own HttpApi
// (evhttp's parser, the connection limits, routing, every route's handler) on a Unix socket in
// a scratch directory. The connection must end (an answer, or closed) within a few seconds of
// the client's half-close; no answer may be a 500 (an exception nothing expected), and every
// answer the API writes must be a JSON object on one line.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/event.h>
#include <nlohmann/json.hpp>

#include "evalsched/daemon/api/http_api.hpp"
#include "evalsched/store/schema.hpp"

namespace {

std::string scratch_dir;  // removed at exit: libFuzzer ends with exit(), never our destructors

struct Daemon {
    event_base* base = nullptr;
    acme::evalsched::HttpApi* api = nullptr;
    std::string socket;

    Daemon() {
        // tmpfs: every accepted submission commits, and an fsync per input made ~7 inputs/s.
        char dir[] = "/dev/shm/evalsched-http-fuzz-XXXXXX";
        if (!mkdtemp(dir)) std::abort();
        scratch_dir = dir;
        std::atexit([] {
            std::error_code ec;
            std::filesystem::remove_all(scratch_dir, ec);
        });
        acme::evalsched::DaemonConfig config;
        config.socket = std::string(dir) + "/api.sock";
        config.database = std::string(dir) + "/e.db";
        config.results_dir = std::string(dir) + "/results";
        config.request_timeout_s = 1;
        config.max_datasets = 50;  // a submission is built and stored per input: keep it small
        config.max_trials = 200;
        socket = config.socket;
        base = event_base_new();
        api = new acme::evalsched::HttpApi(base, config, acme::store::open_evalsched_store(config.database),
                                           acme::store::open_evalsched_store(config.database), [] {});
        api->listen();
    }
};

Daemon& daemon() {
    static Daemon d;
    return d;
}

void check_answer(const std::string& out) {
    if (out.empty()) return;  // closed without an answer: the parser refused the bytes
    // evhttp answers in the request's own HTTP version ("HTTP/0.1 ..." included).
    const auto space = out.find(' ');
    if (out.rfind("HTTP/", 0) != 0 || space == std::string::npos) std::abort();
    const int code = std::atoi(out.c_str() + space + 1);
    if (code < 100 || code > 599 || code == 500) std::abort();
    const auto body_at = out.find("\r\n\r\n");
    if (body_at == std::string::npos) return;
    const std::string head = out.substr(0, body_at);
    if (head.find("application/json") == std::string::npos) return;  // evhttp's own error pages
    const std::string body = out.substr(body_at + 4);
    const auto nl = body.find('\n');
    if (nl == std::string::npos) return;  // cut short by the close
    const auto j = nlohmann::json::parse(body.substr(0, nl), nullptr, false);
    if (j.is_discarded() || (!j.is_object() && !j.is_array())) std::abort();
    if (code >= 400 && !(j.is_object() && j.contains("error") && j["error"].is_string())) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Daemon& d = daemon();
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", d.socket.c_str());
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) std::abort();
    std::size_t sent = 0;
    bool half_closed = false;
    std::string out;
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        if (sent < size) {
            const ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
            if (n > 0) sent += static_cast<std::size_t>(n);
            else if (errno != EAGAIN) sent = size;  // the daemon closed: it refused the rest
        }
        if (sent == size && !half_closed) {
            shutdown(fd, SHUT_WR);
            half_closed = true;
        }
        // The daemon's loop: its sweep timer fires at least every 250 ms, so ONCE returns.
        event_base_loop(d.base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
        char buf[65536];
        const ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n > 0) out.append(buf, static_cast<std::size_t>(n));
        else if (n == 0 || errno != EAGAIN) break;
        if (std::chrono::steady_clock::now() - start > std::chrono::seconds(5)) std::abort();  // a hang
        if (n < 0) {
            pollfd p{fd, POLLIN, 0};
            poll(&p, 1, 1);
        }
    }
    close(fd);
    check_answer(out);
    return 0;
}
