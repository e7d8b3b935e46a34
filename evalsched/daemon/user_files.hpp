// Reading what a trial wrote (results, timings, its log tail) as the trial's user: the files
// live in a directory that user owns, so as root a planted symlink could make the daemon read
// anything. setfsuid/setfsgid change the filesystem identity of the calling thread only (the
// scheduler's), and O_NOFOLLOW refuses a symlink at the last component.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <sys/types.h>

namespace acme::evalsched {

// At most max_bytes from the end of the file (the whole file when smaller); nullopt when it
// cannot be read as that user.
std::optional<std::string> read_as_user(const std::string& path, uid_t uid, gid_t gid, std::size_t max_bytes);

}  // namespace acme::evalsched
