// Reading the end of a job's stdout/stderr from a root process without ever opening a
// user-controlled path as root: a child process drops to the job's uid and gid (no
// supplementary groups) before it opens anything, so a symlink to a root-only file yields
// nothing, and a FIFO or device is refused. The parent only reads the pipe, bounded in bytes and
// time.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace acme::faultguard {

struct TailResult {
    std::string text;                  // the tails, stdout first; a cut first line is dropped
    std::vector<std::string> notes;    // per path: why it gave nothing, if it did not
};

// Reads up to max_bytes from the end of each distinct path, as uid:gid. (A job of root's is
// read with root's rights: its paths are root's own choice.)
TailResult read_tails_as_user(const std::vector<std::string>& paths, uid_t uid, gid_t gid, long long max_bytes,
                              double timeout_s);

}  // namespace acme::faultguard
