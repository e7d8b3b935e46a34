// The epilog's side of the sampler: find it by its pid file, make sure the pid still is that
// sampler (pids are reused), ask it to finish, and wait a bounded time.
#pragma once

#include <string>
#include <string_view>

namespace acme::telemetry {

enum class StopResult {
    not_running,  // no pid file, or its pid is not our sampler any more
    stopped,      // exited after SIGTERM (its final flush done)
    killed,       // did not exit in time: SIGKILL, the last samples are lost
};

StopResult stop_sampler(const std::string& pidfile, long long job_id, double timeout_s);

// True if `pid` is an acme-gpu-sampler for `job_id` (reads /proc/<pid>/cmdline).
bool is_sampler_of(long pid, long long job_id);

// True if `pid`'s start time (acme_proc_start_time) is `start_ticks`, the one its pid file
// gives: the process that wrote it, whatever it runs now (the prolog's child waiting to exec
// the sampler), not a later one with its pid.
bool is_pidfile_process(long pid, std::string_view start_ticks, const std::string& proc_root = "/proc");

}  // namespace acme::telemetry
