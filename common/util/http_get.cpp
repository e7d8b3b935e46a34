#include "common/util/http_get.hpp"

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include <pthread.h>
#include <signal.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace acme::util {

std::optional<HttpUrl> parse_http_url(const std::string& text, std::string& error) {
    if (text.empty()) {
        error = "empty URL";
        return std::nullopt;
    }
    std::unique_ptr<evhttp_uri, decltype(&evhttp_uri_free)> uri(evhttp_uri_parse(text.c_str()), &evhttp_uri_free);
    if (!uri) {
        error = "not a URL";
        return std::nullopt;
    }
    const char* scheme = evhttp_uri_get_scheme(uri.get());
    const char* host = evhttp_uri_get_host(uri.get());
    if (scheme && strcasecmp(scheme, "https") == 0) {
        error = "https is not supported (plain http:// only)";
        return std::nullopt;
    }
    if (!scheme || strcasecmp(scheme, "http") != 0 || !host || !*host) {
        error = "not an http:// URL";
        return std::nullopt;
    }
    if (evhttp_uri_get_userinfo(uri.get()) || evhttp_uri_get_query(uri.get()) || evhttp_uri_get_fragment(uri.get())) {
        error = "a user, query or fragment in the URL";
        return std::nullopt;
    }
    HttpUrl url;
    url.text = text;
    url.host = host;
    // evhttp keeps an IPv6 literal's brackets; getaddrinfo wants the address alone.
    if (url.host.size() > 2 && url.host.front() == '[' && url.host.back() == ']') url.host = url.host.substr(1, url.host.size() - 2);
    const int port = evhttp_uri_get_port(uri.get());
    if (port == 0 || port > 65535) {
        error = "port out of range";
        return std::nullopt;
    }
    url.port = port < 0 ? 80 : port;
    const char* path = evhttp_uri_get_path(uri.get());
    url.path = path ? path : "";
    while (!url.path.empty() && url.path.back() == '/') url.path.pop_back();
    return url;
}

std::string url_encode(const std::string& value) {
    std::unique_ptr<char, decltype(&std::free)> out(evhttp_uriencode(value.data(), static_cast<ev_ssize_t>(value.size()), 0),
                                                    &std::free);
    return out ? std::string(out.get()) : std::string();
}

struct HttpClient::State {
    event_base* base = nullptr;
    evhttp_connection* conn = nullptr;
    ~State() {
        if (conn) evhttp_connection_free(conn);
        if (base) event_base_free(base);
    }
};

namespace {

// What one get() waits for; the callbacks fill it and break the loop.
struct Pending {
    event_base* base = nullptr;
    HttpResponse response;
    bool done = false, timed_out = false;
    std::optional<evhttp_request_error> failure;
    std::size_t max_body = 0;
    double timeout_s = 0;
};

// evhttp (2.1) reports a refused connect by calling the request's callback with no response and
// without the error callback (its ECONNREFUSED path); errno is gone by then. Every other failure
// goes through the error callback, and a timeout is this client's own deadline.
std::string failure_text(const Pending& p) {
    if (!p.failure) return "connection refused";
    switch (*p.failure) {
        case EVREQ_HTTP_TIMEOUT: return fmt::format("no answer within {:g} s", p.timeout_s);
        case EVREQ_HTTP_INVALID_HEADER: return "not an HTTP answer (invalid header)";
        case EVREQ_HTTP_REQUEST_CANCEL: return "request cancelled";
        case EVREQ_HTTP_DATA_TOO_LONG: return fmt::format("answer larger than {} bytes", p.max_body);
        case EVREQ_HTTP_EOF:
        case EVREQ_HTTP_BUFFER_ERROR: break;
    }
    return "connection closed without an answer";
}

// libevent writes with plain write(2): a server closing the connection under a write would raise
// SIGPIPE and kill the command. Held blocked for the request; one it raised is discarded before
// the mask is restored (one that was pending before is left for the caller).
class SigpipeHeld {
public:
    SigpipeHeld() {
        sigemptyset(&pipe_);
        sigaddset(&pipe_, SIGPIPE);
        sigset_t pending;
        sigpending(&pending);
        was_pending_ = sigismember(&pending, SIGPIPE) == 1;
        pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
    }
    ~SigpipeHeld() {
        sigset_t pending;
        sigpending(&pending);
        if (!was_pending_ && sigismember(&pending, SIGPIPE) == 1) {
            const timespec now{};
            sigtimedwait(&pipe_, nullptr, &now);
        }
        pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    }
    SigpipeHeld(const SigpipeHeld&) = delete;
    SigpipeHeld& operator=(const SigpipeHeld&) = delete;

private:
    sigset_t pipe_{}, old_{};
    bool was_pending_ = false;
};

timeval timeval_of(double seconds) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(seconds);
    tv.tv_usec = static_cast<suseconds_t>((seconds - std::floor(seconds)) * 1e6);
    return tv;
}

void on_done(evhttp_request* req, void* arg) {
    auto& p = *static_cast<Pending*>(arg);
    p.done = true;
    const int code = req ? evhttp_request_get_response_code(req) : 0;
    if (code > 0) {
        p.response.status = code;
        evbuffer* in = evhttp_request_get_input_buffer(req);
        const std::size_t n = evbuffer_get_length(in);
        p.response.body.resize(n);
        if (n > 0) evbuffer_remove(in, p.response.body.data(), n);
    } else {
        p.response.error = failure_text(p);
    }
    event_base_loopbreak(p.base);
}

void on_error(evhttp_request_error error, void* arg) {
    auto& p = *static_cast<Pending*>(arg);
    p.failure = error;
}

void on_deadline(evutil_socket_t, short, void* arg) {
    auto& p = *static_cast<Pending*>(arg);
    p.timed_out = true;
    event_base_loopbreak(p.base);
}

}  // namespace

HttpClient::HttpClient(HttpUrl url, HttpLimits limits) : url_(std::move(url)), limits_(limits), state_(std::make_unique<State>()) {}

HttpClient::~HttpClient() = default;

HttpResponse HttpClient::get(const std::string& target) { return request(false, target, nullptr, "", {}); }

HttpResponse HttpClient::post(const std::string& target, const std::string& body, const std::string& content_type,
                              const std::vector<std::pair<std::string, std::string>>& headers) {
    return request(true, target, &body, content_type, headers);
}

HttpResponse HttpClient::request(bool post, const std::string& target, const std::string* body,
                                 const std::string& content_type,
                                 const std::vector<std::pair<std::string, std::string>>& extra) {
    const SigpipeHeld held;
    HttpResponse failed;
    // A header value with a line break would let a configured value forge headers.
    auto unsafe = [](const std::string& v) { return v.find_first_of("\r\n") != std::string::npos || v.find('\0') != std::string::npos; };
    for (const auto& [name, value] : extra)
        if (name.empty() || unsafe(name) || unsafe(value) || name.find(':') != std::string::npos) {
            failed.error = "a header with a line break or an empty name";
            return failed;
        }
    if (unsafe(content_type)) {
        failed.error = "a content type with a line break";
        return failed;
    }
    if (!state_->base && !(state_->base = event_base_new())) {
        failed.error = "cannot create an event loop";
        return failed;
    }
    if (!state_->conn) {
        // No DNS base: the host name is resolved by the system's resolver (getaddrinfo) when the
        // connection is made; a site names Prometheus by address or by a name /etc/hosts or its
        // DNS answers quickly.
        state_->conn = evhttp_connection_base_new(state_->base, nullptr, url_.host.c_str(), static_cast<ev_uint16_t>(url_.port));
        if (!state_->conn) {
            failed.error = "cannot create a connection";
            return failed;
        }
        // evhttp's own timeout is a backstop a second after the request's deadline below, so
        // that a timeout is always reported as one.
        const timeval tv = timeval_of(limits_.timeout_s + 1);
        evhttp_connection_set_timeout_tv(state_->conn, &tv);
        evhttp_connection_set_retries(state_->conn, 0);
        evhttp_connection_set_max_body_size(state_->conn, static_cast<ev_ssize_t>(limits_.max_body));
    }
    Pending p;
    p.base = state_->base;
    p.max_body = limits_.max_body;
    p.timeout_s = limits_.timeout_s;
    evhttp_request* req = evhttp_request_new(on_done, &p);
    if (!req) {
        failed.error = "cannot create a request";
        return failed;
    }
    evhttp_request_set_error_cb(req, on_error);
    evkeyvalq* headers = evhttp_request_get_output_headers(req);
    const bool v6 = url_.host.find(':') != std::string::npos;
    const std::string host = fmt::format("{}{}{}:{}", v6 ? "[" : "", url_.host, v6 ? "]" : "", url_.port);
    evhttp_add_header(headers, "Host", host.c_str());
    evhttp_add_header(headers, "Accept", "application/json");
    evhttp_add_header(headers, "User-Agent", "acme-slurm");
    if (post) {
        evhttp_add_header(headers, "Content-Type", content_type.empty() ? "application/octet-stream" : content_type.c_str());
        for (const auto& [name, value] : extra) evhttp_add_header(headers, name.c_str(), value.c_str());
        if (body && !body->empty()) evbuffer_add(evhttp_request_get_output_buffer(req), body->data(), body->size());
    } else {
        for (const auto& [name, value] : extra) evhttp_add_header(headers, name.c_str(), value.c_str());
    }
    const std::string path = url_.path + target;
    // The connection's timeout restarts with every read: a server trickling bytes could hold the
    // request forever. One deadline for the whole request bounds it.
    event* deadline = evtimer_new(state_->base, on_deadline, &p);
    const timeval total = timeval_of(limits_.timeout_s);
    if (!deadline || evtimer_add(deadline, &total) != 0) {
        if (deadline) event_free(deadline);
        evhttp_request_free(req);
        failed.error = "cannot arm the timeout";
        return failed;
    }
    if (evhttp_make_request(state_->conn, req, post ? EVHTTP_REQ_POST : EVHTTP_REQ_GET, path.c_str()) != 0) {
        // evhttp_make_request frees the request itself when it fails.
        event_free(deadline);
        failed.error = "cannot send the request";
        return failed;
    }
    while (!p.done && !p.timed_out)
        if (event_base_dispatch(state_->base) != 0) break;
    event_free(deadline);
    if (!p.done) {
        evhttp_cancel_request(req);
        // The connection may hold half an answer: the next get() starts a fresh one.
        evhttp_connection_free(state_->conn);
        state_->conn = nullptr;
        failed.error = p.timed_out ? fmt::format("no answer within {:g} s", limits_.timeout_s) : "event loop failed";
        return failed;
    }
    if (!p.response.error.empty() || p.response.status == 0) {
        evhttp_connection_free(state_->conn);
        state_->conn = nullptr;
    }
    return p.response;
}

}  // namespace acme::util
