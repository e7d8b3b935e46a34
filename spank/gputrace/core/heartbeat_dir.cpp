#include "spank/gputrace/core/heartbeat_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "common/util/fd.hpp"

namespace acme::telemetry {
namespace {

using util::Fd;

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

std::vector<std::string> components(std::string_view path) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < path.size()) {
        while (i < path.size() && path[i] == '/') ++i;
        const std::size_t j = path.find('/', i);
        const auto part = path.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i);
        if (!part.empty()) out.emplace_back(part);
        i = j == std::string_view::npos ? path.size() : j;
    }
    return out;
}

// Opens `base` one component at a time from "/", making what is missing (0755): every
// directory on the way must be root's or the caller's, so no other user can rename or replace
// what follows (a sticky /tmp is fine: nobody else may rename root's entries in it); the base
// itself must be the caller's (root's, in the prolog) and not writable by group or others.
int open_base(std::string_view base, bool create, std::string& error) {
    if (base.empty() || base.front() != '/') {
        error = fmt::format("heartbeat_dir {}: not an absolute path", base);
        return -1;
    }
    Fd dir(::open("/", kDirFlags));
    if (dir.fd < 0) {
        error = fmt::format("heartbeat_dir {}: cannot open /: {}", base, std::strerror(errno));
        return -1;
    }
    const auto parts = components(base);
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const auto& name = parts[i];
        if (name == "." || name == "..") {
            error = fmt::format("heartbeat_dir {}: . or .. in the path", base);
            return -1;
        }
        int next = openat(dir.fd, name.c_str(), kDirFlags);
        if (next < 0 && errno == ENOENT && create) {
            if (mkdirat(dir.fd, name.c_str(), 0755) != 0 && errno != EEXIST) {
                error = fmt::format("heartbeat_dir {}: cannot make {}: {}", base, name, std::strerror(errno));
                return -1;
            }
            next = openat(dir.fd, name.c_str(), kDirFlags);
        }
        if (next < 0) {
            error = fmt::format("heartbeat_dir {}: cannot open {}{}: {}", base, name,
                                errno == ELOOP || errno == ENOTDIR ? " (a symlink or not a directory)" : "",
                                std::strerror(errno));
            return -1;
        }
        Fd sub(next);
        struct stat st {};
        if (fstat(sub.fd, &st) != 0) {
            error = fmt::format("heartbeat_dir {}: cannot stat {}: {}", base, name, std::strerror(errno));
            return -1;
        }
        const bool last = i + 1 == parts.size();
        if (last ? st.st_uid != geteuid() : st.st_uid != 0 && st.st_uid != geteuid()) {
            error = fmt::format("heartbeat_dir {}: {} is owned by uid {}, not by uid {}: make it root's, mode 0755",
                                base, name, st.st_uid, geteuid());
            return -1;
        }
        if (last && (st.st_mode & (S_IWGRP | S_IWOTH))) {
            error = fmt::format("heartbeat_dir {}: writable by group or others (mode {:o}): make it mode 0755", base,
                                st.st_mode & 07777);
            return -1;
        }
        dir = std::move(sub);
    }
    if (parts.empty() && create) {
        error = fmt::format("heartbeat_dir {}: / itself is no place for it", base);
        return -1;
    }
    const int out = dir.release();
    return out;
}

// Unlinks every entry of `dirfd` that is not a directory (a symlink is removed, never followed).
void remove_plain_entries(int dirfd) {
    const int copy = openat(dirfd, ".", kDirFlags);
    if (copy < 0) return;
    DIR* d = fdopendir(copy);
    if (!d) {
        ::close(copy);
        return;
    }
    std::vector<std::string> names;
    int budget = 4096;
    while (const dirent* e = readdir(d)) {
        if (--budget < 0) break;
        if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
        struct stat st {};
        if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode)) names.emplace_back(e->d_name);
    }
    closedir(d);
    for (const auto& n : names) unlinkat(dirfd, n.c_str(), 0);
}

}  // namespace

std::string prepare_heartbeat_dir(std::string_view base, long long job_id, uid_t uid, gid_t gid) {
    std::string error;
    Fd b(open_base(base, true, error));
    if (b.fd < 0) return error;
    const std::string name = std::to_string(job_id);
    const bool made = mkdirat(b.fd, name.c_str(), 0700) == 0;
    if (!made && errno != EEXIST)
        return fmt::format("heartbeat_dir {}: cannot make {}: {}", base, name, std::strerror(errno));
    Fd job(openat(b.fd, name.c_str(), kDirFlags));
    if (job.fd < 0)
        return fmt::format("heartbeat_dir {}: cannot open {}: {}", base, name, std::strerror(errno));
    struct stat st {};
    if (fstat(job.fd, &st) != 0)
        return fmt::format("heartbeat_dir {}: cannot stat {}: {}", base, name, std::strerror(errno));
    // Left by another user's job of the same id (a reused id after a crash): nothing of theirs
    // may be handed to this one.
    if (!made && st.st_uid != uid && st.st_uid != geteuid()) remove_plain_entries(job.fd);
    if (fchown(job.fd, uid, gid) != 0 || fchmod(job.fd, 0700) != 0) {
        const std::string why = std::strerror(errno);
        if (made) unlinkat(b.fd, name.c_str(), AT_REMOVEDIR);
        return fmt::format("heartbeat_dir {}: cannot give {} to uid {}: {}", base, name, uid, why);
    }
    return {};
}

void remove_heartbeat_dir(std::string_view base, long long job_id) {
    std::string error;
    Fd b(open_base(base, false, error));
    if (b.fd < 0) return;
    const std::string name = std::to_string(job_id);
    Fd job(openat(b.fd, name.c_str(), kDirFlags));
    if (job.fd < 0) return;
    remove_plain_entries(job.fd);
    unlinkat(b.fd, name.c_str(), AT_REMOVEDIR);  // ENOTEMPTY: the user made subdirectories; left
}

std::optional<double> heartbeat_mtime(std::string_view base, long long job_id, std::string_view node) {
    std::string error;
    Fd b(open_base(base, false, error));
    if (b.fd < 0) return std::nullopt;
    Fd dir(openat(b.fd, std::to_string(job_id).c_str(), kDirFlags));
    if (dir.fd < 0) return std::nullopt;
    struct stat st {};
    if (fstatat(dir.fd, heartbeat_file_name(node).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
        return std::nullopt;
    return static_cast<double>(st.st_mtim.tv_sec) + static_cast<double>(st.st_mtim.tv_nsec) / 1e9;
}

}  // namespace acme::telemetry
