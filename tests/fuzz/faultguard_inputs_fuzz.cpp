// libFuzzer: faultguard's parsers: plugstack arguments, the epilog helper's command line,
// --output filename patterns and the task-exit hand-off lines slurmstepd writes (which a torn
// write or a full disk can mangle), and the retry settings of a record hand-off (root's, but a
// torn write or an older version's may hold anything).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spank/faultguard/core/epilog_args.hpp"
#include "spank/faultguard/core/faultguard_config.hpp"
#include "spank/faultguard/core/output_path.hpp"
#include "spank/faultguard/core/record_retry.hpp"
#include "spank/faultguard/core/task_exit_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    std::vector<std::string_view> words;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= text.size(); ++i) {
        if (i == text.size() || text[i] == ' ') {
            if (i > start) words.push_back(text.substr(start, i - start));
            start = i + 1;
        }
    }
    const auto config =
        acme::faultguard::parse_plugstack_args(words, {"/etc/rules.d", "/libexec/helper", "", "/f", "/c", "/g"});
    for (const auto& e : config.errors)
        if (e.find('\n') != std::string::npos) __builtin_trap();

    // Whatever the helper accepts, the plugin's argv for it must give back.
    std::string error;
    if (const auto args = acme::faultguard::parse_epilog_args(words, error)) {
        const auto argv = acme::faultguard::epilog_argv("h", *args);
        const std::vector<std::string_view> tail(argv.begin() + 1, argv.end());
        const auto again = acme::faultguard::parse_epilog_args(tail, error);
        if (!again || !(*again == *args)) __builtin_trap();
    } else if (error.empty() || error.find('\n') != std::string::npos) {
        __builtin_trap();
    }

    acme::faultguard::JobNames names{42, 0, 0, "train", "alice", "n1", "/home/alice"};
    const auto path = acme::faultguard::expand_output_pattern(text, names);
    if (path.empty()) __builtin_trap();

    for (const auto& e : acme::faultguard::parse_task_exits(text)) {
        // Whatever parses must format back to a line that parses to the same record.
        const auto again = acme::faultguard::parse_task_exits(acme::faultguard::format_task_exit(e));
        if (again.size() != 1 || again[0].step_id != e.step_id || again[0].task_id != e.task_id ||
            again[0].wait_status != e.wait_status)
            __builtin_trap();
    }
    // Any hand-off's retry settings give a schedule within the bounds, its rounds in order.
    const auto handoff = nlohmann::json::parse(text, nullptr, false);
    const auto s = acme::faultguard::retry_schedule_of(handoff.is_discarded() ? nlohmann::json() : handoff);
    if (!(s.window_s >= 0 && s.window_s <= acme::faultguard::kRecordRetryMaxSeconds &&
          s.max_pause_s >= acme::faultguard::kRecordRetryPauseMinSeconds &&
          s.max_pause_s <= acme::faultguard::kRecordRetryPauseMaxSeconds))
        __builtin_trap();
    if (const auto first = acme::faultguard::next_retry_round(s, 0); first && (*first <= 0 || *first >= s.window_s))
        __builtin_trap();
    return 0;
}
