#include "spank/faultguard/core/resident_gate.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "common/nvml/library.hpp"
#include "common/store/spool.hpp"
#include "common/util/fd.hpp"
#include "common/util/line_read.hpp"
#include "common/util/parse.hpp"
#include "common/util/wall_clock.hpp"
#include "spank/faultguard/core/faultguard_paths.hpp"
#include "spank/faultguard/core/health_check.hpp"
#include "spank/faultguard/core/spool_records.hpp"

namespace acme::faultguard {

namespace {

using Clock = std::chrono::steady_clock;
using util::Fd;

int to_ms(double s) { return static_cast<int>(s * 1000); }

// The request line from one prolog, at most kGateLineMax bytes within limit_s; nullopt when it
// does not come whole.
std::optional<std::string> read_request(int c, double limit_s) {
    std::string line;
    int error = 0;
    if (util::read_line(c, kGateLineMax, Clock::now() + std::chrono::milliseconds(to_ms(limit_s)), line, error) !=
        util::LineRead::line)
        return std::nullopt;
    return line;
}

void send_answer(int c, const GateAnswer& a) {
    const auto text = format_gate_answer(a);
    // One short line into an empty socket buffer; a prolog that is gone gets nothing (no SIGPIPE).
    (void)::send(c, text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

// A package upgrade replaced the program: a current one takes over at the next job.
bool program_replaced() {
    char path[4096];
    const auto n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0) return false;
    const std::string_view p(path, static_cast<std::size_t>(n));
    return p.size() >= 10 && p.substr(p.size() - 10) == " (deleted)";
}

bool same_file(const std::string& path, const struct stat& bound) {
    struct stat now {};
    return lstat(path.c_str(), &now) == 0 && now.st_ino == bound.st_ino && now.st_dev == bound.st_dev;
}

}  // namespace

int serve_resident_gate(const ResidentGateOptions& o) {
    const auto who = fmt::format("acme-health-gate --serve on {}", o.node);
    const auto dir = run_dir(o.spool);
    mkdir(o.spool.c_str(), 0700);
    mkdir(dir.c_str(), 0700);
    struct stat st {};
    if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
        fmt::print(stderr, "{}: {} is not a directory of ours closed to others; not serving\n", who, dir);
        return 1;
    }
    const auto lock_path = gate_lock_path(o.spool, o.node);
    Fd lock(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (lock.fd < 0) {
        fmt::print(stderr, "{}: {}: {}; not serving\n", who, lock_path, std::strerror(errno));
        return 1;
    }
    if (flock(lock.fd, LOCK_EX | LOCK_NB) != 0) return 0;  // another serves this node

    const auto socket_path = gate_socket_path(o.spool, o.node);
    // Bound and listening under a name of its own, then renamed into place: a prolog never
    // finds a socket that refuses it (bound, not yet listening) and starts a second gate.
    const auto bind_path = socket_path + ".new";
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (bind_path.size() >= sizeof addr.sun_path) {
        fmt::print(stderr, "{}: socket path {} is longer than a Unix socket's; not serving\n", who, bind_path);
        return 1;
    }
    std::memcpy(addr.sun_path, bind_path.c_str(), bind_path.size() + 1);

    // Starting is bounded like a check: a driver that hangs in nvmlInit would hold the node's
    // lock for good, with no socket, and every later GPU job's prolog would run the gate process
    // (tens to hundreds of ms where the resident gate answers in a few) and start another gate
    // that finds the lock taken (#41). The alarm ends this process; the next prolog tries again.
    alarm(static_cast<unsigned>(o.check_limit_s + 0.999));
    std::string error;
    auto nvml = nvml::Library::open(o.nvml, error);
    if (!nvml) {
        alarm(0);
        fmt::print(stderr, "{}: {}; not serving (each job's gate runs as its own process)\n", who, error);
        return 1;
    }
    nvml->shutdown();  // initialised only while a job is checked
    auto db = store::open_spool(store::spool_path(o.spool, o.node));
    alarm(0);

    Fd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (listener.fd < 0) {
        fmt::print(stderr, "{}: socket: {}; not serving\n", who, std::strerror(errno));
        return 1;
    }
    ::unlink(bind_path.c_str());  // a previous gate's: we hold the lock, so no gate owns it
    const mode_t old_mask = umask(0177);  // the socket: 0600
    const int bound_rc = ::bind(listener.fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
    umask(old_mask);
    struct stat bound {};
    const char* step = bound_rc != 0                                                  ? "bind"
                       : ::listen(listener.fd, 16) != 0                               ? "listen"
                       : std::rename(bind_path.c_str(), socket_path.c_str()) != 0 ? "rename"
                       : lstat(socket_path.c_str(), &bound) != 0                      ? "lstat"
                                                                                      : nullptr;
    if (step) {
        fmt::print(stderr, "{}: {} {}: {}; not serving\n", who, step, socket_path, std::strerror(errno));
        ::unlink(bind_path.c_str());
        return 1;
    }
    std::signal(SIGPIPE, SIG_IGN);
    fmt::print(stderr, "{}: serving on {} (ends after {:g} s without a job)\n", who, socket_path, o.idle_s);

    std::string end_reason;
    auto last_job = Clock::now();
    while (end_reason.empty()) {
        // Wakes every 10 s at least: a socket taken away (the spool removed) ends it then.
        const auto idle_left = std::chrono::duration_cast<std::chrono::milliseconds>(
                                   last_job + std::chrono::milliseconds(to_ms(o.idle_s)) - Clock::now())
                                   .count();
        if (idle_left <= 0) {
            end_reason = fmt::format("no job for {:g} s", o.idle_s);
            break;
        }
        pollfd p{listener.fd, POLLIN, 0};
        const int rc = poll(&p, 1, static_cast<int>(std::min<long long>(idle_left, 10000)));
        if (rc == 0) {
            if (!same_file(socket_path, bound)) end_reason = "its socket was taken away";
            continue;
        }
        if (rc < 0) {
            if (errno == EINTR) continue;
            end_reason = fmt::format("poll: {}", std::strerror(errno));
            break;
        }
        Fd c(::accept4(listener.fd, nullptr, nullptr, SOCK_CLOEXEC));
        if (c.fd < 0) continue;
        ucred peer{};
        socklen_t len = sizeof peer;
        if (getsockopt(c.fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 || peer.uid != 0) continue;
        const auto line = read_request(c.fd, o.client_limit_s);
        if (!line) continue;
        last_job = Clock::now();
        std::string parse_error;
        const auto request = parse_gate_request(*line, parse_error);
        if (!request) {
            send_answer(c.fd, {false, "resident gate: bad request: " + parse_error});
            continue;
        }
        if (request->nvml != o.nvml || request->rules != o.rules) end_reason = "the prolog asks with other settings";
        else if (program_replaced()) end_reason = "its program was replaced";
        else if (!same_file(socket_path, bound)) end_reason = "its socket was taken away";
        if (!end_reason.empty()) {
            send_answer(c.fd, {false, "resident gate ending: " + end_reason});
            break;
        }
        // A check that hangs (a wedged driver call) ends this process: the prolog has long
        // stopped waiting, and the next one starts a new gate.
        alarm(static_cast<unsigned>(o.check_limit_s + 0.999));
        GateAnswer answer;
        try {
            GatePhases phases;
            if (!nvml->reinit(error)) {
                answer = {false, "resident gate: cannot check: " + error};
                end_reason = error;
            } else {
                const auto problems =
                    health_problems(db, *nvml, {o.node, o.spool, request->gpus, o.rules}, phases);
                nvml->shutdown();
                if (problems.empty()) {
                    record_health_check(db, o.node, util::wall_now(), request->job, true, "ok");
                    phases.done("record");
                    auto text = phases.line();
                    if (!text.empty()) text.insert(text.size() - 1, "; resident");
                    answer = {true, fmt::format("health gate on {}: ok for job {}{}", o.node, request->job, text)};
                } else {
                    std::string detail;
                    for (const auto& problem : problems) detail += (detail.empty() ? "" : "; ") + problem;
                    answer = {false, "resident gate found: " + detail};
                }
            }
        } catch (const std::exception& e) {
            nvml->shutdown();
            answer = {false, fmt::format("resident gate: error: {}", e.what())};
        }
        alarm(0);
        send_answer(c.fd, answer);
    }
    if (same_file(socket_path, bound)) ::unlink(socket_path.c_str());
    fmt::print(stderr, "{}: ending: {}\n", who, end_reason);
    return 0;
}

}  // namespace acme::faultguard
