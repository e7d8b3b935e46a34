#include "spank/faultguard/core/task_exit_log.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/util/parse.hpp"

namespace acme::faultguard {

std::string format_task_exit(const TaskExit& e) {
    return fmt::format("{} {} {} {:.3f}\n", e.step_id, e.task_id, e.wait_status, e.ts);
}

std::vector<TaskExit> parse_task_exits(std::string_view text) {
    std::vector<TaskExit> out;
    std::size_t start = 0;
    while (start < text.size() && out.size() < 1'000'000) {
        const auto end = text.find('\n', start);
        if (end == std::string_view::npos) break;  // no newline: a torn last write
        const auto line = text.substr(start, end - start);
        start = end + 1;
        std::string_view fields[4];
        std::size_t n = 0, pos = 0;
        while (n < 4 && pos <= line.size()) {
            const auto sp = line.find(' ', pos);
            fields[n++] = line.substr(pos, sp == std::string_view::npos ? std::string_view::npos : sp - pos);
            if (sp == std::string_view::npos) {
                pos = line.size() + 1;
                break;
            }
            pos = sp + 1;
        }
        if (n != 4 || pos <= line.size()) continue;
        const auto step = util::parse_int(fields[0]);
        const auto task = util::parse_int(fields[1]);
        const auto status = util::parse_int(fields[2]);
        const auto ts = util::parse_double(fields[3]);
        // Unix seconds before year 33658: anything else is a mangled line, not a time.
        if (!step || !task || !status || !ts || *status < 0 || *status > 0xffff || *ts < 0 || *ts > 1e12) continue;
        out.push_back({*step, *task, static_cast<int>(*status), *ts});
    }
    return out;
}

bool ended_cleanly(std::string_view exit_code2, const std::optional<std::string>& task_exits) {
    if (exit_code2 != "0:0" || !task_exits) return false;
    const auto exits = parse_task_exits(*task_exits);
    // Every line parsed: a line the parser skipped may have been a failed task's.
    const auto lines = static_cast<std::size_t>(std::count(task_exits->begin(), task_exits->end(), '\n'));
    if (exits.size() != lines || (!task_exits->empty() && task_exits->back() != '\n')) return false;
    return std::all_of(exits.begin(), exits.end(), [](const TaskExit& e) { return e.wait_status == 0; });
}

}  // namespace acme::faultguard
