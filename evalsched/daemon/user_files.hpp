// Touching files in a directory a user owns (an evaluation's output directory: its logs,
// results, markers) from the root daemon. The user can swap any component for a symlink at
// any moment, so root never resolves a path there: the work happens in a short-lived child
// that has become the user (setgroups, setgid, setuid: supplementary groups included), and
// only its answer comes back through a pipe. The parent waits a bounded time (a hung NFS or a
// user's FUSE mount must not stall the scheduler) and reaps a wedged child later.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace acme::evalsched {

// Who the child becomes: the evaluation's uid and gid, and the user's groups from the group
// database (looked up before forking: NSS is not safe in a forked child of a threaded process).
struct UserIdentity {
    uid_t uid = 0;
    gid_t gid = 0;
    std::vector<gid_t> groups;
};
UserIdentity identity_of(uid_t uid, gid_t gid);

// All of p[0, n) to fd, through EINTR and short writes: async-signal-safe, for forked children.
bool write_all(int fd, const char* p, std::size_t n);

// At most max_bytes from the end of the file (the whole file when smaller); nullopt when it
// cannot be read as that user, is not a regular file (a symlink at the last component counts
// as not one), or the read takes longer than timeout_s.
std::optional<std::string> read_as_user(const std::string& path, uid_t uid, gid_t gid, std::size_t max_bytes, double timeout_s = 10);

// A whole file of the user's, at most max_bytes, and why not when it is not there to read: what
// the readers of a job's JSON records (job_outputs.hpp) tell apart, since a record that is
// missing (the job never got that far) and one that is a FIFO or 2 GiB (the user's doing)
// mean different things.
struct UserText {
    enum Status { ok, missing, not_regular, too_large, unreadable, no_answer } status = unreadable;
    std::string text;
};
UserText read_whole_as_user(const std::string& path, uid_t uid, gid_t gid, std::size_t max_bytes, double timeout_s = 10);

// Makes `dir` (an evaluation's output directory, inside the admin's root-owned results_dir)
// the user's and, as the user, the subdirectories `subdirs` in it. The output directory is
// created and handed over through a descriptor opened with O_NOFOLLOW, so a symlink planted
// in its place is refused, never chowned through. A subdirectory that exists and is not a
// directory the user owns (a symlink, a file) is refused too. Returns the one-line reason on
// refusal, nullopt when every directory is there and the user's.
std::optional<std::string> prepare_user_dirs(const std::string& dir, const std::vector<std::string>& subdirs, uid_t uid, gid_t gid,
                                             double timeout_s = 10);

// Runs a helper program (argv[0] an absolute path, the admin's) as the user, its stdout the
// answer (at most max_output bytes), stdin /dev/null, a minimal environment. Used where the
// work needs more than a forked child may do (allocation, std::filesystem): evalsched follow's
// checkpoint scan. nullopt when it could not start or did not end within timeout_s (killed);
// otherwise its exit status (-1: killed by a signal) and what it wrote.
struct HelperAnswer {
    int status = -1;
    std::string output;
};
std::optional<HelperAnswer> run_helper_as_user(const std::vector<std::string>& argv, uid_t uid, gid_t gid, std::size_t max_output,
                                               double timeout_s = 30);

}  // namespace acme::evalsched
