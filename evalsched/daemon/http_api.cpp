#include "evalsched/daemon/http_api.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>
#include <stdexcept>
#include <vector>

#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <fmt/format.h>

#include "evalsched/daemon/api_request.hpp"
#include "evalsched/daemon/log.hpp"
#include "evalsched/daemon/routes/route.hpp"

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
    struct group* g = getgrnam(group.c_str());
    if (!g) return false;
    if (g->gr_gid == primary) return true;
    const gid_t wanted = g->gr_gid;
    int n = 64;
    std::vector<gid_t> groups(static_cast<std::size_t>(n));
    if (getgrouplist(user.c_str(), primary, groups.data(), &n) < 0) {
        groups.resize(static_cast<std::size_t>(n));
        if (getgrouplist(user.c_str(), primary, groups.data(), &n) < 0) return false;
    }
    for (int i = 0; i < n; ++i)
        if (groups[static_cast<std::size_t>(i)] == wanted) return true;
    return false;
}

double now_s() { return static_cast<double>(std::time(nullptr)); }

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
    if (passwd* pw = getpwuid(cred.uid)) caller.user = pw->pw_name;
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
                 std::function<void()> wake, const std::atomic<int>* cluster_gpus)
    : base_(base), config_(config), db_(std::move(db)), wake_(std::move(wake)), cluster_gpus_(cluster_gpus) {
    // A request whose client hung up while its submission was built is still ours to answer:
    // libevent keeps it, detached, until evhttp_send_reply, which then only frees it.
    submitter_ = std::make_unique<SubmitWorker>(
        base, config_, std::move(submit_db), wake_, cluster_gpus_,
        [](void* token, const Reply& reply) { send(static_cast<evhttp_request*>(token), reply); });
}

HttpApi::~HttpApi() {
    // The worker first: no Reply may be delivered to a request evhttp_free has released.
    submitter_.reset();
    if (http_) evhttp_free(http_);
    if (metrics_) evhttp_free(metrics_);
}

void HttpApi::listen() {
    http_ = evhttp_new(base_);
    evhttp_set_max_body_size(http_, 2 << 20);
    evhttp_set_allowed_methods(http_, EVHTTP_REQ_GET | EVHTTP_REQ_POST);
    evhttp_set_gencb(http_, &HttpApi::on_request, this);

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
    if (!evhttp_accept_socket_with_handle(http_, fd)) throw std::runtime_error(fmt::format("{}: evhttp cannot accept on it", config_.socket));

    if (!config_.metrics_listen.empty()) {
        const auto colon = config_.metrics_listen.rfind(':');
        const std::string host = config_.metrics_listen.substr(0, colon);
        const int port = std::atoi(config_.metrics_listen.c_str() + colon + 1);
        metrics_ = evhttp_new(base_);
        evhttp_set_allowed_methods(metrics_, EVHTTP_REQ_GET);
        evhttp_set_gencb(metrics_, &HttpApi::on_metrics, this);
        if (evhttp_bind_socket(metrics_, host.c_str(), static_cast<ev_uint16_t>(port)) != 0)
            throw std::runtime_error(fmt::format("metrics_listen={}: cannot listen there: choose a free port", config_.metrics_listen));
    }
}

void HttpApi::on_request(evhttp_request* req, void* self) { static_cast<HttpApi*>(self)->handle(req); }

void HttpApi::on_metrics(evhttp_request* req, void* self) {
    auto* api = static_cast<HttpApi*>(self);
    if (std::string(evhttp_request_get_uri(req)) != "/metrics") {
        evhttp_send_error(req, 404, "only /metrics here");
        return;
    }
    try {
        const std::string text = metrics_text(api->db_);
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
            send(req, error_reply(404, fmt::format("no such API: {} {}", method, evhttp_request_get_uri(req))));
            return;
        }
        // Bodies are bounded by evhttp (listen: 2 MiB); only a POST carries one.
        std::string body = post ? body_of(req) : std::string();
        if (route->route == Route::submit) {
            if (!submitter_->post(req, *caller, std::move(body), now_s()))
                send(req, error_reply(503, "evalschedd is busy with other submissions: retry in a few seconds"));
            return;
        }
        RouteContext ctx{db_, config_, *caller, *route, body, caches_, wake_, cluster_gpus_ ? cluster_gpus_->load() : 0, now_s()};
        send(req, handler_for(route->route)(ctx));
    } catch (const std::exception& ex) {
        log_line("request failed: {}", ex.what());
        send(req, error_reply(500, std::string("evalschedd: ") + ex.what()));
    }
}

}  // namespace acme::evalsched
