// One look at a running job's progress files as the job's user (never as root: the paths are
// the user's to choose, and may be symlinks): the stdout/stderr sizes, the heartbeat file's
// mtime, the newest mtime and total size two levels under --ckpt-dir. Sizes and times only;
// nothing is read. A child process switches to the user and stats; it is killed when a hung
// file system holds it past the timeout (the look then finds nothing).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "spank/gputrace/core/stall.hpp"

namespace acme::telemetry {

struct ProbePaths {
    std::vector<std::string> logs;  // stdout, stderr (one when they are the same file)
    std::string heartbeat;  // <the job's private directory>/heartbeat.<node>; no symlink followed
    std::string ckpt_dir;
};

Probe probe_as_user(const ProbePaths& paths, uid_t uid, gid_t gid, double timeout_s);

}  // namespace acme::telemetry
