// The hand-off from slurmstepd to the epilog. task_exit runs inside slurmstepd, where nothing
// heavy may happen: it appends one short line per task to <spool>/run/<node>.<job>.task_exits
// (O_APPEND, one write) and the epilog's helper turns the lines into task_exits rows.
#pragma once

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

}  // namespace acme::faultguard
