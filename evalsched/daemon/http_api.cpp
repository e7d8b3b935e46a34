#include "evalsched/daemon/http_api.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <string_view>
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
#include <nlohmann/json.hpp>

#include "common/store/evalsched_store.hpp"
#include "evalsched/core/trials.hpp"
#include "evalsched/daemon/api_request.hpp"
#include "evalsched/daemon/job_script.hpp"
#include "evalsched/daemon/log.hpp"
#include "evalsched/daemon/state.hpp"

namespace acme::evalsched {
namespace {

using nlohmann::json;

std::string body_text(const json& body) { return body.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"; }

void reply_text(evhttp_request* req, int code, const std::string& text) {
    evkeyvalq* headers = evhttp_request_get_output_headers(req);
    evhttp_add_header(headers, "Content-Type", "application/json");
    evbuffer* out = evbuffer_new();
    evbuffer_add(out, text.data(), text.size());
    evhttp_send_reply(req, code, code == 200 ? "OK" : code == 201 ? "Created" : "Error", out);
    evbuffer_free(out);
}

void reply(evhttp_request* req, int code, const json& body) { reply_text(req, code, body_text(body)); }

void reply_error(evhttp_request* req, int code, const std::string& message) { reply(req, code, json{{"error", message}}); }

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

}  // namespace

HttpApi::HttpApi(event_base* base, const DaemonConfig& config, store::Database db, std::function<void()> wake,
                 const std::atomic<int>* cluster_gpus)
    : base_(base), config_(config), db_(std::move(db)), wake_(std::move(wake)), cluster_gpus_(cluster_gpus) {}

HttpApi::~HttpApi() {
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

namespace {

// A Prometheus summary: quantiles 0.5, 0.9, 0.99 (nearest rank), sum and count.
std::string summary(std::string_view name, std::string_view help, std::vector<double> v) {
    std::string out = fmt::format("# HELP {} {}\n# TYPE {} summary\n", name, help, name);
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (double x : v) sum += x;
    for (double q : {0.5, 0.9, 0.99}) {
        if (v.empty()) break;
        const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
        out += fmt::format("{}{{quantile=\"{}\"}} {}\n", name, q, v[std::min(v.size(), std::max<std::size_t>(rank, 1)) - 1]);
    }
    out += fmt::format("{}_sum {}\n{}_count {}\n", name, sum, name, v.size());
    return out;
}

}  // namespace

const std::string* HttpApi::cached(const std::string& key, const std::string& stamp) {
    auto it = replies_.find(key);
    if (it == replies_.end() || it->second.first != stamp) return nullptr;
    return &it->second.second;
}

void HttpApi::keep(const std::string& key, const std::string& stamp, const std::string& text) {
    if (replies_.size() > kMaxReplies) replies_.clear();
    replies_[key] = {stamp, text};
}

void HttpApi::on_request(evhttp_request* req, void* self) { static_cast<HttpApi*>(self)->handle(req); }

void HttpApi::on_metrics(evhttp_request* req, void* self) {
    auto* api = static_cast<HttpApi*>(self);
    if (std::string(evhttp_request_get_uri(req)) != "/metrics") {
        evhttp_send_error(req, 404, "only /metrics here");
        return;
    }
    try {
        const Counts c = counts(api->db_);
        std::string text =
            "# HELP evalsched_trials Trials by state.\n# TYPE evalsched_trials gauge\n";
        for (const auto& [state, n] : c.trials_by_state) text += fmt::format("evalsched_trials{{state=\"{}\"}} {}\n", state, n);
        text += "# HELP evalsched_metric_jobs CPU metric jobs (one per dataset with a metric_command) by state.\n"
                "# TYPE evalsched_metric_jobs gauge\n";
        for (const auto& [state, n] : c.metric_jobs_by_state) text += fmt::format("evalsched_metric_jobs{{state=\"{}\"}} {}\n", state, n);
        text += fmt::format("# HELP evalsched_evaluations_active Evaluations not finished.\n# TYPE evalsched_evaluations_active gauge\n"
                            "evalsched_evaluations_active {}\n", c.evaluations_active);
        text += fmt::format("# HELP evalsched_shared_storage_bytes_total Checkpoint bytes read from shared storage.\n"
                            "# TYPE evalsched_shared_storage_bytes_total counter\nevalsched_shared_storage_bytes_total {}\n", c.shared_bytes);
        text += fmt::format("# HELP evalsched_queue_depth Trials waiting for a GPU or in Slurm's queue.\n# TYPE evalsched_queue_depth gauge\n"
                            "evalsched_queue_depth {}\n", c.queue_depth);
        text += summary("evalsched_evaluation_makespan_seconds",
                        fmt::format("Submission to last trial end of the newest {} finished evaluations.", kRecentForMetrics), c.makespans);
        if (!c.makespans.empty())
            text += fmt::format("# HELP evalsched_last_evaluation_makespan_seconds The newest finished evaluation's makespan.\n"
                                "# TYPE evalsched_last_evaluation_makespan_seconds gauge\nevalsched_last_evaluation_makespan_seconds {}\n",
                                c.makespans.back());
        text += summary("evalsched_prior_relative_error",
                        fmt::format("|run time - predicted median| / predicted median of the newest {} finished unsharded trials.",
                                    kRecentForMetrics),
                        c.prior_errors);
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
        // The caller: the process at the other end of this connection, as the kernel says.
        evhttp_connection* conn = evhttp_request_get_connection(req);
        const int fd = conn ? static_cast<int>(bufferevent_getfd(evhttp_connection_get_bufferevent(conn))) : -1;
        ucred cred{};
        socklen_t len = sizeof cred;
        if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
            reply_error(req, 403, "cannot identify the caller (SO_PEERCRED)");
            return;
        }
        Caller caller;
        caller.uid = cred.uid;
        caller.gid = cred.gid;
        if (passwd* pw = getpwuid(cred.uid)) caller.user = pw->pw_name;
        else caller.user = std::to_string(cred.uid);
        caller.admin = cred.uid == 0 || in_group(caller.user, cred.gid, config_.admin_group);

        const char* method = evhttp_request_get_command(req) == EVHTTP_REQ_POST ? "POST" : "GET";
        std::optional<RouteMatch> route;
        try {
            route = match_route(method, evhttp_request_get_uri(req));
        } catch (const RequestError& e) {
            reply_error(req, 400, e.what());
            return;
        }
        if (!route) {
            reply_error(req, 404, fmt::format("no such API: {} {}", method, evhttp_request_get_uri(req)));
            return;
        }
        // A read's answer is kept under what decides it (route, argument, admin or uid) and
        // reused while the versions of the evaluations it shows are unchanged (the stamp).
        const std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}", static_cast<int>(route->route), route->id, route->arg,
                                            caller.admin ? std::string("*") : std::to_string(caller.uid));
        auto answer = [&](const json& body, const std::string& stamp) {
            std::string text = body_text(body);
            reply_text(req, 200, text);
            keep(key, stamp, text);
        };
        switch (route->route) {
        case Route::health:
            reply(req, 200, json{{"ok", true}, {"user", caller.user}, {"admin", caller.admin}});
            return;
        case Route::list:
            reply_text(req, 200, summaries_.list_text(db_, caller) + "\n");
            return;
        case Route::show: {
            const auto version = evaluation_version(db_, route->id, caller);
            std::optional<json> e;
            if (version) {
                const std::string stamp = std::to_string(*version);
                if (const std::string* hit = cached(key, stamp)) {
                    reply_text(req, 200, *hit);
                    return;
                }
                e = evaluation_json(db_, route->id, caller);
                if (e) answer(*e, stamp);
            }
            if (!e) reply_error(req, 404, fmt::format("evaluation {} not found (or not yours): see evalsched status", route->id));
            return;
        }
        case Route::cancel: {
            const CancelResult r = cancel_evaluation(db_, route->id, caller, now_s());
            if (r == CancelResult::not_found) reply_error(req, 404, fmt::format("evaluation {} not found (or not yours): see evalsched status", route->id));
            else if (r == CancelResult::already_finished) reply_error(req, 409, fmt::format("evaluation {} already finished: nothing to cancel", route->id));
            else {
                log_line("evaluation {} cancelled by {}", route->id, caller.user);
                wake_();
                reply(req, 200, json{{"id", route->id}, {"state", "cancelled"}});
            }
            return;
        }
        case Route::report: {
            const std::string stamp = report_versions(db_, route->arg, caller);
            if (const std::string* hit = stamp.empty() ? nullptr : cached(key, stamp)) {
                reply_text(req, 200, *hit);
                return;
            }
            auto r = stamp.empty() ? std::nullopt : report_json(db_, route->arg, caller);
            if (!r) reply_error(req, 404, fmt::format("no evaluation named {} that you can see: see evalsched status", route->arg));
            else answer(*r, stamp);
            return;
        }
        case Route::priors:
            reply(req, 200, priors_.get(db_, route->arg));
            return;
        case Route::submit: {
            evbuffer* in = evhttp_request_get_input_buffer(req);
            const std::size_t n = evbuffer_get_length(in);
            std::string body(n, '\0');
            evbuffer_copyout(in, body.data(), n);
            SubmitRequest sr;
            try {
                sr = parse_submit(body);
            } catch (const RequestError& e) {
                reply_error(req, 400, e.what());
                return;
            } catch (const SuiteError& e) {
                reply_error(req, 400, e.what());
                return;
            }
            PriorBook priors;
            for (const auto& r : store::recent_prior_runs(db_)) priors.add_run({r.dataset, r.size_class, r.gpus}, r.seconds, r.fraction);
            const ModelSpec model{sr.params_b, sr.checkpoint_bytes};
            // Shards and bundles sized to the cluster (what evalsched-sim measures); the fixed
            // defaults until the scheduler has seen the nodes once.
            const int gpus = cluster_gpus_ ? cluster_gpus_->load() : 0;
            const TrialOptions options = gpus > 0 ? options_for(sr.suite, priors, model, gpus) : TrialOptions{};
            const std::int64_t id = create_evaluation(
                db_, sr, caller, config_.results_dir,
                [&](const std::string& output_dir) {
                    Checkpoint ckpt{sr.name + "/" + sr.checkpoint, std::string(kStagedVar), output_dir, model};
                    return make_trials(sr.suite, ckpt, priors, options);
                },
                now_s());
            log_line("evaluation {} submitted by {}: {} ({} datasets of suite {})", id, caller.user, sr.checkpoint_path,
                     sr.suite.datasets.size(), sr.suite.name);
            wake_();
            auto e = evaluation_json(db_, id, caller);
            reply(req, 201, e ? *e : json{{"id", id}});
            return;
        }
        }
    } catch (const std::exception& ex) {
        log_line("request failed: {}", ex.what());
        reply_error(req, 500, std::string("evalschedd: ") + ex.what());
    }
}

}  // namespace acme::evalsched
