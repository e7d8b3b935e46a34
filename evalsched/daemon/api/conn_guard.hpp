// What a hostile or broken client may hold of evalschedd: at most max_connections_per_user
// connections per peer uid (SO_PEERCRED, as the API authenticates), and a connection that has
// not sent a whole request within request_timeout of its start (or of its previous reply) is
// closed, so idle and slowloris clients cannot keep descriptors (evhttp's own timeout is per
// read, which a client trickling one byte a second never trips). Connections are known by
// descriptor and socket inode, so a closed descriptor reused for a new socket is a new entry
// and no close callback is needed (libevent 2.1 gives none before a connection's first request).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace acme::evalsched {

class ConnectionGuard {
public:
    ConnectionGuard(int max_per_uid, double request_timeout_s) : max_per_uid_(max_per_uid), timeout_s_(request_timeout_s) {}

    // A new connection on `fd`, accepted at `now`: true and registered when its peer holds
    // fewer than max_per_uid live connections; false (not registered) otherwise, or when the
    // kernel cannot name its peer. `uid` is the peer (or -1 when unknown).
    bool admit(int fd, double now, uid_t& uid);
    // The connection on `fd` is being answered (no deadline) / was answered at `now` (the next
    // request is due within request_timeout).
    void busy(int fd);
    void idle(int fd, double now);
    // Descriptors whose deadline passed, forgotten here; the caller shuts them down.
    std::vector<int> expired(double now);
    // Live connections of `uid` (dead entries are dropped on the way).
    int live(uid_t uid);

private:
    struct Entry {
        int fd;
        ino_t ino;
        double deadline;  // 0: being answered
    };
    static bool alive(const Entry& e);
    Entry* find(int fd);

    int max_per_uid_;
    double timeout_s_;
    std::unordered_map<uid_t, std::vector<Entry>> by_uid_;
};

// At most one line per `interval_s` for a repeated error, carrying how many were left out:
// a client that makes accept(2) fail a million times a second must not fill the disk.
class LogLimiter {
public:
    explicit LogLimiter(double interval_s = 10) : interval_s_(interval_s) {}
    // True when a line may be written now; `suppressed` is how many were held back before it.
    bool allow(double now, long& suppressed);

private:
    double interval_s_;
    double last_ = -1e300;
    long held_ = 0;
};

// The HTTP answer written straight to a refused connection's socket (it has no request yet).
std::string refusal_response(int code, const std::string& message);

}  // namespace acme::evalsched
