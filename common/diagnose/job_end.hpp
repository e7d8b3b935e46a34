// What is known about a job when it ended: the inputs of a diagnosis. Plain data so that a
// SPANK epilog, faultdiag and the tests fill it the same way; nothing here reads the system.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace acme::diagnose {

// How a process ended: an exit code, or the signal that killed it.
struct ExitStatus {
    int exit_code = 0;  // WEXITSTATUS, 0 when a signal killed it
    int signal = 0;     // WTERMSIG, 0 when it exited
    bool operator==(const ExitStatus&) const = default;
    bool success() const noexcept { return exit_code == 0 && signal == 0; }
};

// Decodes a raw wait(2) status (S_TASK_EXIT_STATUS, SLURM_JOB_EXIT_CODE).
ExitStatus from_wait_status(int wait_status) noexcept;

// Parses SLURM_JOB_EXIT_CODE2, "<exit>:<signal>" (e.g. "0:9", "127:0"); nullopt when malformed.
std::optional<ExitStatus> parse_exit_code2(std::string_view text) noexcept;

// One event the sampler recorded for a GPU (node spool gpu_events).
struct GpuEvent {
    int gpu = 0;             // global id, as in SLURM_JOB_GPUS
    std::string kind;        // "xid", "ecc_dbe", "ecc_sbe", ...
    std::optional<std::int64_t> code;  // the XID number, the ECC count
    double ts = 0;           // Unix seconds
    std::string detail;      // the driver's words, when known
};

struct JobEnd {
    // The tail of the job's stdout and stderr as one text. Line numbers in the evidence count
    // from its first line, so a caller that cut the tail mid-line should drop that first line.
    std::string_view log;
    // The job's exit as Slurm reports it (SLURM_JOB_EXIT_CODE2), when known.
    std::optional<ExitStatus> job_exit;
    // Each task's raw wait status (task_exit), in any order.
    std::vector<int> task_wait_statuses;
    // Events on this node's GPUs during the job; those on GPUs not in job_gpus are ignored
    // (an empty job_gpus means "all of them are the job's").
    std::vector<GpuEvent> gpu_events;
    std::vector<int> job_gpus;
    bool oom_kill = false;      // the job's cgroup recorded an OOM kill
    bool time_limit = false;    // Slurm ended it at its time limit
    bool cancelled = false;     // scancel, preemption
    bool node_failure = false;  // Slurm marked the node failed under it
    // The sampler's stall verdict for this run (common/store/spool_stalls.hpp): the job stopped
    // making progress while it ran, and whether a node was named.
    bool stalled = false;
    bool stall_named = false;
};

}  // namespace acme::diagnose
