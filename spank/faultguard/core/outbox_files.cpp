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

std::vector<OutboxEntry> outbox_entries(const std::string& spool, const std::string& node) {
    const std::string dir = run_dir(spool);
    std::vector<OutboxEntry> out;
    DIR* d = ::opendir(dir.c_str());
    if (!d) return out;
    const std::string prefix = node + ".";
    while (const dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (!name.starts_with(prefix) || !name.ends_with(".record")) continue;
        const std::string path = dir + "/" + name;
        const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) continue;
        struct stat st {};
        if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_size > (1 << 20)) {
            ::close(fd);
            continue;
        }
        OutboxEntry entry;
        entry.path = path;
        entry.mtime = static_cast<double>(st.st_mtime);
        entry.locked = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
        std::string text;
        char buf[8192];
        for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
        ::close(fd);  // drops the shared lock, if taken
        entry.handoff = nlohmann::json::parse(text, nullptr, false);
        if (entry.handoff.is_discarded()) entry.handoff = nullptr;
        out.push_back(std::move(entry));
    }
    ::closedir(d);
    std::sort(out.begin(), out.end(), [](const OutboxEntry& a, const OutboxEntry& b) {
        return a.mtime != b.mtime ? a.mtime < b.mtime : a.path < b.path;
    });
    return out;
}

int take_retrier_lock(const std::string& spool, const std::string& node, bool& held, std::string& error) {
    held = false;
    const std::string dir_path = run_dir(spool);
    const int dir = ::open(dir_path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir < 0) {
        error = fmt::format("{}: {}", dir_path, std::strerror(errno));
        return -1;
    }
    struct stat st {};
    if (::fstat(dir, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        ::close(dir);
        error = fmt::format("{}: not a directory of ours that only we may write", dir_path);
        return -1;
    }
    const std::string name = record_retrier_lock_name(node);
    const int fd = ::openat(dir, name.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    const int open_errno = errno;
    ::close(dir);
    if (fd < 0) {
        error = fmt::format("{}/{}: {}", dir_path, name, std::strerror(open_errno));
        return -1;
    }
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
        ::close(fd);
        error = fmt::format("{}/{}: not a regular file of ours", dir_path, name);
        return -1;
    }
    // An OFD lock (not flock): a publisher asks whether one runs with F_OFD_GETLK, which takes
    // nothing (core/prepared_exec.hpp, lock_held).
    struct flock whole {};
    whole.l_type = F_WRLCK;
    whole.l_whence = SEEK_SET;
    if (::fcntl(fd, F_OFD_SETLK, &whole) != 0) {
        held = errno == EAGAIN || errno == EACCES;
        if (!held) error = fmt::format("{}/{}: {}", dir_path, name, std::strerror(errno));
        ::close(fd);
        return -1;
    }
    const std::string pid = fmt::format("{}\n", ::getpid());
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
        error = fmt::format("{}/{}: cannot write the pid", dir_path, name);
        ::close(fd);
        return -1;
    }
    return fd;
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
