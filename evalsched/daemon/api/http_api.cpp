#include "evalsched/daemon/api/http_api.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <vector>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <fmt/format.h>

#include "evalsched/daemon/accounts.hpp"
#include "evalsched/daemon/api/api_request.hpp"
#include "evalsched/daemon/log.hpp"
#include "evalsched/daemon/api/routes/route.hpp"

namespace acme::evalsched {
namespace {

void send(evhttp_request* req, const Reply& r) {
    evkeyvalq* headers = evhttp_request_get_output_headers(req);
    evhttp_add_header(headers, "Content-Type", "application/json");
    evbuffer* out = evbuffer_new();
    evbuffer_add(out, r.text.data(), r.text.size());
    const char* reason = r.code == 200 ? "OK" : r.code == 201 ? "Created" : r.code == 503 ? "Service Unavailable" : "Error";
    evhttp_send_reply(req, r.code, reason, out);
    evbuffer_free(out);
}

bool in_group(const std::string& user, gid_t primary, const std::string& group) {
    if (group.empty()) return false;
    const auto wanted = group_id(group);
    if (!wanted) return false;
    if (*wanted == primary) return true;
    for (gid_t g : groups_of(user, primary))
        if (g == *wanted) return true;
    return false;
}

double now_s() { return static_cast<double>(std::time(nullptr)); }

double mono_s() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

timeval tv_of(double s) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(s);
    tv.tv_usec = static_cast<suseconds_t>((s - static_cast<double>(tv.tv_sec)) * 1e6);
    return tv;
}

// The HttpApi owning each listener: libevent hands the error callback the listener's user data,
// which evhttp has set to itself.
std::mutex listeners_mutex;
std::map<evconnlistener*, HttpApi*> listeners;

int fd_of(evhttp_request* req) {
    evhttp_connection* conn = evhttp_request_get_connection(req);
    return conn ? static_cast<int>(bufferevent_getfd(evhttp_connection_get_bufferevent(conn))) : -1;
}

// The process at the other end of this connection, as the kernel says; nullopt when it cannot.
std::optional<Caller> peer_caller(evhttp_request* req, const std::string& admin_group) {
    evhttp_connection* conn = evhttp_request_get_connection(req);
    const int fd = conn ? static_cast<int>(bufferevent_getfd(evhttp_connection_get_bufferevent(conn))) : -1;
    ucred cred{};
    socklen_t len = sizeof cred;
    if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return std::nullopt;
    Caller caller;
    caller.uid = cred.uid;
    caller.gid = cred.gid;
    if (const auto account = account_of(cred.uid)) caller.user = account->name;
    else caller.user = std::to_string(cred.uid);
    caller.admin = cred.uid == 0 || in_group(caller.user, cred.gid, admin_group);
    return caller;
}

std::string body_of(evhttp_request* req) {
    evbuffer* in = evhttp_request_get_input_buffer(req);
    const std::size_t n = evbuffer_get_length(in);
    std::string body(n, '\0');
    evbuffer_copyout(in, body.data(), n);
    return body;
}

}  // namespace

HttpApi::HttpApi(event_base* base, const DaemonConfig& config, store::Database db, store::Database submit_db,
                 std::function<void()> wake, const std::atomic<int>* cluster_gpus, const SchedulerStatus* status)
    : guard_(config.max_connections_per_user, config.request_timeout_s),
      base_(base),
      config_(config),
      db_(std::move(db)),
      wake_(std::move(wake)),
      cluster_gpus_(cluster_gpus),
      status_(status) {
    // A request whose client hung up while its submission was built is still ours to answer:
    // libevent keeps it, detached, until evhttp_send_reply, which then only frees it.
    submitter_ = std::make_unique<SubmitWorker>(
        base, config_, std::move(submit_db), wake_, cluster_gpus_,
        [](void* token, const Reply& reply) { send(static_cast<evhttp_request*>(token), reply); });
}

HttpApi::~HttpApi() {
    // The worker first: no Reply may be delivered to a request evhttp_free has released.
    submitter_.reset();
    if (listener_) {
        std::lock_guard lock(listeners_mutex);
        listeners.erase(listener_);
    }
    for (bufferevent* bev : pending_) bufferevent_decref(bev);
    if (check_event_) event_free(check_event_);
    if (resume_event_) event_free(resume_event_);
    if (http_) evhttp_free(http_);
    if (metrics_) evhttp_free(metrics_);
}

void HttpApi::listen() {
    http_ = evhttp_new(base_);
    // evhttp's own limits: a header or body over its size fails the request (the connection is
    // closed) before it is buffered whole; the timeout is evhttp's per read and per write.
    evhttp_set_max_body_size(http_, static_cast<ev_ssize_t>(config_.max_body_bytes));
    evhttp_set_max_headers_size(http_, static_cast<ev_ssize_t>(config_.max_header_bytes));
    const timeval timeout = tv_of(config_.request_timeout_s);
    evhttp_set_timeout_tv(http_, &timeout);
    evhttp_set_allowed_methods(http_, EVHTTP_REQ_GET | EVHTTP_REQ_POST);
    evhttp_set_gencb(http_, &HttpApi::on_request, this);
    evhttp_set_bevcb(http_, &HttpApi::on_new_connection, this);
    check_event_ = event_new(base_, -1, EV_PERSIST, &HttpApi::on_check, this);
    resume_event_ = evtimer_new(base_, &HttpApi::on_resume, this);
    // The sweep for deadlines: a few times per timeout, at most once a second.
    const timeval sweep = tv_of(std::min(1.0, std::max(0.05, config_.request_timeout_s / 4)));
    if (!check_event_ || !resume_event_ || event_add(check_event_, &sweep) != 0) throw std::runtime_error("evalschedd: cannot schedule its connection checks");

    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (config_.socket.size() >= sizeof addr.sun_path) throw std::runtime_error(fmt::format("socket path {} is too long: choose a shorter one", config_.socket));
    std::strcpy(addr.sun_path, config_.socket.c_str());
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error(fmt::format("socket: {}", strerror(errno)));
    // A stale socket from a killed daemon blocks bind; a live daemon answers connect.
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
        close(fd);
        throw std::runtime_error(fmt::format("{}: another evalschedd is listening there: stop it first", config_.socket));
    }
    unlink(config_.socket.c_str());
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 256) != 0) {
        const int err = errno;
        close(fd);
        throw std::runtime_error(fmt::format("{}: cannot listen: {}: check that its directory exists", config_.socket, strerror(err)));
    }
    // Everyone may connect; SO_PEERCRED decides what each caller may see.
    chmod(config_.socket.c_str(), 0666);
    evhttp_bound_socket* bound = evhttp_accept_socket_with_handle(http_, fd);
    if (!bound) throw std::runtime_error(fmt::format("{}: evhttp cannot accept on it", config_.socket));
    // Without an error callback libevent logs every failed accept(2) and retries at once: at
    // EMFILE that is a busy loop writing a line per try. Ours pauses the listener instead.
    listener_ = evhttp_bound_socket_get_listener(bound);
    {
        std::lock_guard lock(listeners_mutex);
        listeners[listener_] = this;
    }
    evconnlistener_set_error_cb(listener_, &HttpApi::on_accept_error);

    if (!config_.metrics_listen.empty()) {
        const auto colon = config_.metrics_listen.rfind(':');
        const std::string host = config_.metrics_listen.substr(0, colon);
        const int port = std::atoi(config_.metrics_listen.c_str() + colon + 1);
        metrics_ = evhttp_new(base_);
        evhttp_set_allowed_methods(metrics_, EVHTTP_REQ_GET);
        evhttp_set_max_headers_size(metrics_, static_cast<ev_ssize_t>(config_.max_header_bytes));
        evhttp_set_max_body_size(metrics_, 0);
        evhttp_set_timeout_tv(metrics_, &timeout);
        evhttp_set_gencb(metrics_, &HttpApi::on_metrics, this);
        if (evhttp_bind_socket(metrics_, host.c_str(), static_cast<ev_uint16_t>(port)) != 0)
            throw std::runtime_error(fmt::format("metrics_listen={}: cannot listen there: choose a free port", config_.metrics_listen));
    }
}

void HttpApi::on_request(evhttp_request* req, void* self) { static_cast<HttpApi*>(self)->handle(req); }

bufferevent* HttpApi::on_new_connection(event_base* base, void* self) {
    auto* api = static_cast<HttpApi*>(self);
    bufferevent* bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (!bev) return nullptr;
    // evhttp sets the descriptor once this returns; held until check_new has looked at it.
    bufferevent_incref(bev);
    api->pending_.push_back(bev);
    event_active(api->check_event_, EV_TIMEOUT, 0);
    return bev;
}

void HttpApi::on_check(int, short, void* self) {
    auto* api = static_cast<HttpApi*>(self);
    api->check_new();
    // Shut down, not closed: the descriptor is evhttp's, which frees its connection on EOF.
    for (int fd : api->guard_.expired(mono_s())) shutdown(fd, SHUT_RDWR);
}

bool HttpApi::check_new(int fd) {
    bool refused_fd = false;
    std::vector<bufferevent*> pending;
    pending.swap(pending_);
    for (bufferevent* bev : pending) {
        const int nfd = static_cast<int>(bufferevent_getfd(bev));
        uid_t uid = 0;
        if (nfd >= 0 && !guard_.admit(nfd, mono_s(), uid)) {
            const std::string why =
                uid == static_cast<uid_t>(-1)
                    ? std::string("cannot identify the caller (SO_PEERCRED)")
                    : fmt::format("uid {} already holds {} connections to evalschedd (max_connections_per_user): close some and retry",
                                  uid, config_.max_connections_per_user);
            const std::string answer = refusal_response(503, why);
            [[maybe_unused]] const ssize_t n = ::send(nfd, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
            shutdown(nfd, SHUT_RDWR);
            if (nfd == fd) refused_fd = true;
            long held = 0;
            if (refused_log_.allow(mono_s(), held))
                log_line("refused a connection: {}{}", why, held ? fmt::format(" ({} more refusals not logged)", held) : "");
        }
        bufferevent_decref(bev);
    }
    return refused_fd;
}

void HttpApi::on_accept_error(evconnlistener* listener, void*) {
    const int err = EVUTIL_SOCKET_ERROR();
    HttpApi* api = nullptr;
    {
        std::lock_guard lock(listeners_mutex);
        if (auto it = listeners.find(listener); it != listeners.end()) api = it->second;
    }
    if (!api) return;
    // Out of descriptors (or memory) the pending connection stays in the backlog; retrying at
    // once fails again. A second's pause lets closing connections free some.
    evconnlistener_disable(listener);
    const timeval pause = tv_of(1);
    evtimer_add(api->resume_event_, &pause);
    long held = 0;
    if (api->accept_log_.allow(mono_s(), held))
        log_line("cannot accept connections on {}: {}{}: pausing 1 s; raise the open-files limit (LimitNOFILE) or lower "
                 "max_connections_per_user", api->config_.socket, strerror(err),
                 held ? fmt::format(" ({} more failures not logged)", held) : "");
}

void HttpApi::on_resume(int, short, void* self) { evconnlistener_enable(static_cast<HttpApi*>(self)->listener_); }

void HttpApi::on_metrics(evhttp_request* req, void* self) {
    auto* api = static_cast<HttpApi*>(self);
    if (std::string(evhttp_request_get_uri(req)) != "/metrics") {
        evhttp_send_error(req, 404, "only /metrics here");
        return;
    }
    try {
        std::string text = metrics_text(api->db_);
        if (api->status_) text += api->status_->refill_metrics();
        evbuffer* out = evbuffer_new();
        evbuffer_add(out, text.data(), text.size());
        evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "text/plain; version=0.0.4");
        evhttp_send_reply(req, 200, "OK", out);
        evbuffer_free(out);
    } catch (const std::exception& ex) {
        evhttp_send_error(req, 500, ex.what());
    }
}

void HttpApi::handle(evhttp_request* req) {
    const int fd = fd_of(req);
    // A connection accepted in this same loop pass is judged before its first request.
    if (check_new(fd)) {
        send(req, error_reply(503, "too many connections from this user (max_connections_per_user): close some and retry"));
        return;
    }
    guard_.busy(fd);
    evhttp_request_set_on_complete_cb(
        req, [](evhttp_request* r, void* self) { static_cast<HttpApi*>(self)->guard_.idle(fd_of(r), mono_s()); }, this);
    try {
        const std::optional<Caller> caller = peer_caller(req, config_.admin_group);
        if (!caller) {
            send(req, error_reply(403, "cannot identify the caller (SO_PEERCRED)"));
            return;
        }
        const bool post = evhttp_request_get_command(req) == EVHTTP_REQ_POST;
        const char* method = post ? "POST" : "GET";
        std::optional<RouteMatch> route;
        try {
            route = match_route(method, evhttp_request_get_uri(req));
        } catch (const RequestError& e) {
            send(req, error_reply(400, e.what()));
            return;
        }
        if (!route) {
            send(req, error_reply(404, fmt::format("no such API: {} {}: see evalsched(1)", method, printable(evhttp_request_get_uri(req)))));
            return;
        }
        // Bodies are bounded by evhttp (listen: 2 MiB); only a POST carries one.
        std::string body = post ? body_of(req) : std::string();
        // Submissions are built on the submit worker's thread; the event loop only reads.
        if (route->row->handler == &route_submit) {
            if (!submitter_->post(req, *caller, std::move(body), now_s()))
                send(req, error_reply(503, "evalschedd is busy with other submissions: retry in a few seconds"));
            return;
        }
        RouteContext ctx{db_, config_, *caller, *route, body, caches_, wake_, cluster_gpus_ ? cluster_gpus_->load() : 0, now_s(),
                         status_};
        send(req, route->row->handler(ctx));
    } catch (const std::exception& ex) {
        long held = 0;
        if (failed_log_.allow(mono_s(), held)) log_line("request failed: {}{}", ex.what(), held ? fmt::format(" ({} more not logged)", held) : "");
        send(req, error_reply(500, std::string("evalschedd: ") + ex.what()));
    }
}

}  // namespace acme::evalsched
