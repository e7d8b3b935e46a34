#include "spank/faultguard/core/outbox_files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <utility>

#include <fmt/format.h>

#include "spank/faultguard/core/faultguard_paths.hpp"

namespace acme::faultguard {
namespace {

// True when a publisher holds the part's lock now.
bool part_locked(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return false;
    const bool locked = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    ::close(fd);  // drops the shared lock, if taken
    return locked;
}

}  // namespace

bool write_handoff(const std::string& path, const nlohmann::json& handoff, std::string& error) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        error = fmt::format("cannot write {}: {}", path, std::strerror(errno));
        return false;
    }
    const std::string text = handoff.dump();
    const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    if (!ok) {
        error = fmt::format("short write to {}", path);
        unlink(path.c_str());
    }
    return ok;
}

std::vector<std::string> outbox_parts(const std::string& spool, const std::string& node, const std::string& except,
                                      std::size_t max) {
    const std::string dir = run_dir(spool);
    std::vector<std::pair<std::time_t, std::string>> found;
    DIR* d = ::opendir(dir.c_str());
    if (!d) return {};
    const std::string prefix = node + ".";
    while (const dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (!name.starts_with(prefix) || !name.ends_with(".record")) continue;
        const std::string path = dir + "/" + name;
        struct stat st {};
        if (path == except || ::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) continue;
        // A part written moments ago is its own epilog's, whose publisher is starting; one whose
        // lock is held is being published. A publisher started for either only finds the lock
        // taken and exits, but each start costs a whole helper's exec on the node that is
        // starting the next job (issue #41): left out.
        if (static_cast<double>(std::time(nullptr) - st.st_mtime) < kOutboxSettleSeconds || part_locked(path)) continue;
        found.emplace_back(st.st_mtime, path);
    }
    ::closedir(d);
    std::sort(found.begin(), found.end());
    std::vector<std::string> out;
    for (auto& [mtime, path] : found) {
        if (out.size() >= max) break;
        out.push_back(std::move(path));
    }
    return out;
}

}  // namespace acme::faultguard
