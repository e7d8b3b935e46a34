#include "evalsched/daemon/api/conn_guard.hpp"

#include <algorithm>

#include <sys/socket.h>
#include <sys/stat.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace acme::evalsched {

bool ConnectionGuard::alive(const Entry& e) {
    struct stat st{};
    return fstat(e.fd, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_ino == e.ino;
}

int ConnectionGuard::live(uid_t uid) {
    auto it = by_uid_.find(uid);
    if (it == by_uid_.end()) return 0;
    auto& v = it->second;
    v.erase(std::remove_if(v.begin(), v.end(), [](const Entry& e) { return !alive(e); }), v.end());
    const int n = static_cast<int>(v.size());
    if (v.empty()) by_uid_.erase(it);
    return n;
}

bool ConnectionGuard::admit(int fd, double now, uid_t& uid) {
    uid = static_cast<uid_t>(-1);
    ucred cred{};
    socklen_t len = sizeof cred;
    struct stat st{};
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || fstat(fd, &st) != 0) return false;
    uid = cred.uid;
    // A descriptor number reused since its entry was made: drop the old one first.
    for (auto& [u, v] : by_uid_)
        v.erase(std::remove_if(v.begin(), v.end(), [&](const Entry& e) { return e.fd == fd; }), v.end());
    if (live(uid) >= max_per_uid_) return false;
    by_uid_[uid].push_back(Entry{fd, st.st_ino, now + timeout_s_});
    return true;
}

ConnectionGuard::Entry* ConnectionGuard::find(int fd) {
    for (auto& [u, v] : by_uid_)
        for (auto& e : v)
            if (e.fd == fd) return &e;
    return nullptr;
}

void ConnectionGuard::busy(int fd) {
    if (Entry* e = find(fd)) e->deadline = 0;
}

void ConnectionGuard::idle(int fd, double now) {
    if (Entry* e = find(fd)) e->deadline = now + timeout_s_;
}

std::vector<int> ConnectionGuard::expired(double now) {
    std::vector<int> out;
    for (auto it = by_uid_.begin(); it != by_uid_.end();) {
        auto& v = it->second;
        v.erase(std::remove_if(v.begin(), v.end(),
                               [&](const Entry& e) {
                                   if (!alive(e)) return true;
                                   if (e.deadline > 0 && e.deadline <= now) {
                                       out.push_back(e.fd);
                                       return true;
                                   }
                                   return false;
                               }),
                v.end());
        it = v.empty() ? by_uid_.erase(it) : std::next(it);
    }
    return out;
}

bool LogLimiter::allow(double now, long& suppressed) {
    if (now - last_ < interval_s_) {
        ++held_;
        return false;
    }
    suppressed = held_;
    held_ = 0;
    last_ = now;
    return true;
}

std::string refusal_response(int code, const std::string& message) {
    const std::string body = nlohmann::json{{"error", message}}.dump() + "\n";
    const char* reason = code == 503 ? "Service Unavailable" : code == 408 ? "Request Timeout" : "Error";
    return fmt::format("HTTP/1.1 {} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}", code,
                       reason, body.size(), body);
}

}  // namespace acme::evalsched
