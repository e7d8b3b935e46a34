// The hand-off from slurmstepd to the epilog. task_exit runs inside slurmstepd, where nothing
// heavy may happen: it appends one short line per task to <spool>/run/<node>.<job>.task_exits
// (O_APPEND, one write) and the epilog's helper turns the lines into task_exits rows.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spank/faultguard/core/faultguard_paths.hpp"

namespace acme::faultguard {

struct TaskExit {
    long long step_id = 0;
    long long task_id = 0;
    int wait_status = 0;  // raw, as S_TASK_EXIT_STATUS gives it
    double ts = 0;
    bool operator==(const TaskExit&) const = default;
};

std::string format_task_exit(const TaskExit& e);  // one line, '\n'-terminated
// Malformed lines (a torn write, garbage) are skipped.
std::vector<TaskExit> parse_task_exits(std::string_view text);

// True when a job left nothing to diagnose or recover on this node: it ended 0:0 (the epilog's
// SLURM_JOB_EXIT_CODE2) and every task exit slurmstepd handed over (`task_exits`, the file's
// text; nullopt when it could not be read whole) is 0. A torn or garbled line counts as a
// failure, so the job gets the full epilog. The plugin then runs the epilog's helper detached
// and releases the node at once (faultguard(8), "The epilog").
bool ended_cleanly(std::string_view exit_code2, const std::optional<std::string>& task_exits);

}  // namespace acme::faultguard
