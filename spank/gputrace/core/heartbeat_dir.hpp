// Where ACME_HEARTBEAT_FILE lives: one private directory per job, <heartbeat_dir>/<JOBID>,
// owned by the job's user, mode 0700, made by gputrace's job prolog (root) and removed by its
// epilog. In a shared /tmp another user could create a job's heartbeat file first (and read or
// hold it); here the base is root's and not writable by others, so only root makes entries in
// it, and every step is a dirfd opened with O_NOFOLLOW: no symlink planted by a user is followed
// by root. The trainer touches the file; the sampler stats it as the job's user.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

namespace acme::telemetry {

// <base>/<job>: the job's directory on this node (the same on every node; nodes sharing a file
// system share it, and each node's file is named for the node).
inline std::string heartbeat_job_dir(std::string_view base, long long job_id) {
    while (base.size() > 1 && base.back() == '/') base.remove_suffix(1);
    return std::string(base) + "/" + std::to_string(job_id);
}
// The file's name in it: "heartbeat.<node>".
inline std::string heartbeat_file_name(std::string_view node) { return "heartbeat." + std::string(node); }

// Makes `base` (and any missing parent, 0755) and <base>/<job> owned by uid:gid, mode 0700. An
// existing job directory (another node of the job made it, or an earlier run of it) is taken
// over: its owner and mode are set again, and when it was another user's, its plain entries are
// removed. Returns an empty string, or one line saying why not (a base not owned by the caller or
// writable by group or others; a symlink on the way; a system error); nothing is then made.
std::string prepare_heartbeat_dir(std::string_view base, long long job_id, uid_t uid, gid_t gid);

// Removes every entry of the job's directory that is not a directory (each node's file: the job
// is over on every node when an epilog runs), then the directory if that left it empty
// (subdirectories a user made keep it).
// Never follows a symlink; errors are ignored (the job is over, nothing depends on it).
void remove_heartbeat_dir(std::string_view base, long long job_id);

// The sampler's quick look (root, no fork, gputrace(8) stall_heartbeat_probe): the mtime of the
// node's heartbeat file, every step a dirfd opened with O_NOFOLLOW and the file itself not
// followed; nullopt when it is not there or not a plain file. Only metadata is read, never the file.
std::optional<double> heartbeat_mtime(std::string_view base, long long job_id, std::string_view node);

}  // namespace acme::telemetry
