// Where faultguard's processes meet in the root-owned spool directory: the plugin, its helpers
// and the release watcher they start name the same files, keyed by node (several slurmd may
// share a host, as in the minicluster) and job. Header-only: the plugin compiles it in.
#pragma once

#include <string>
#include <string_view>

#include <fmt/format.h>

namespace acme::faultguard {

// The helpers' own output (slurmd's log gets only their one-line summary).
inline std::string log_path(std::string_view spool, std::string_view node) {
    return fmt::format("{}/{}.faultguard.log", spool, node);
}

// Hand-off files between processes of one job; created by slurmstepd's task_exit.
inline std::string run_dir(std::string_view spool) { return fmt::format("{}/run", spool); }

// slurmstepd's task exits for the epilog's helper (task_exit_log.hpp has the format).
inline std::string task_exit_path(std::string_view spool, std::string_view node, long long job_id) {
    return fmt::format("{}/{}.{}.task_exits", run_dir(spool), node, job_id);
}

// The checkpoint slurmstepd put in ACME_RESUME_CKPT for this run (one line, "" when none was
// complete, "PATH\tMTIME" when the checkpoint's mtime is known: parse_resume_line), for the
// epilog's helper to put in the job record.
inline std::string resume_path(std::string_view spool, std::string_view node, long long job_id) {
    return fmt::format("{}/{}.{}.resume", run_dir(spool), node, job_id);
}

// This node's part of the run's record, from the epilog to the detached process that puts it
// into AdminComment after the node is released (record_publish.hpp).
inline std::string record_part_path(std::string_view spool, std::string_view node, long long job_id, long long restart) {
    return fmt::format("{}/{}.{}.{}.record", run_dir(spool), node, job_id, restart);
}

// The node's record retrier (record_retrier.hpp): the lock the one running holds, with its pid.
inline std::string record_retrier_lock_name(std::string_view node) { return fmt::format("{}.retrier.pid", node); }

// The GPU count slurmctld last gave the health gate for this node (promised_gpus.hpp).
inline std::string promised_gpus_path(std::string_view spool, std::string_view node) {
    return fmt::format("{}/{}.gpus", run_dir(spool), node);
}

// The node's resident health gate (acme-health-gate --serve): its socket, and the lock the one
// serving holds (a second one started at the same time finds it taken and ends).
inline std::string gate_socket_path(std::string_view spool, std::string_view node) {
    return fmt::format("{}/{}.gate.sock", run_dir(spool), node);
}
inline std::string gate_lock_path(std::string_view spool, std::string_view node) {
    return fmt::format("{}/{}.gate.lock", run_dir(spool), node);
}

}  // namespace acme::faultguard
