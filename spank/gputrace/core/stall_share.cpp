#include "spank/gputrace/core/stall_share.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace acme::telemetry {

StallShare::StallShare(const std::string& dir) {
    mkdir(dir.c_str(), 0700);
    fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd_ < 0) {
        error_ = fmt::format("stall_share {}: {}", dir, std::strerror(errno));
        return;
    }
    struct stat st {};
    if (fstat(fd_, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
        error_ = fmt::format("stall_share {}: not owned by this user or writable by others; not used", dir);
        ::close(fd_);
        fd_ = -1;
    }
}

StallShare::~StallShare() {
    if (fd_ >= 0) ::close(fd_);
}

bool StallShare::write(long long job_id, const NodeState& s) {
    if (fd_ < 0) return false;
    const std::string name = fmt::format("{}.{}", job_id, s.node), tmp = name + ".tmp";
    const int out = openat(fd_, tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out < 0) return false;
    const std::string line = format_state(s) + "\n";
    const bool ok = ::write(out, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    ::close(out);
    return ok && renameat(fd_, tmp.c_str(), fd_, name.c_str()) == 0;
}

std::vector<NodeState> StallShare::read(long long job_id, const std::vector<std::string>& nodes) const {
    std::vector<NodeState> out;
    if (fd_ < 0) return out;
    for (const auto& node : nodes) {
        const std::string name = fmt::format("{}.{}", job_id, node);
        const int in = openat(fd_, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (in < 0) continue;
        char buf[600];
        const ssize_t n = ::read(in, buf, sizeof buf);
        ::close(in);
        if (n <= 0) continue;
        auto s = parse_state(std::string_view(buf, static_cast<std::size_t>(n)));
        if (s && s->node == node) out.push_back(std::move(*s));
    }
    return out;
}

void StallShare::remove(long long job_id, const std::string& node) {
    if (fd_ >= 0) unlinkat(fd_, fmt::format("{}.{}", job_id, node).c_str(), 0);
}

}  // namespace acme::telemetry
