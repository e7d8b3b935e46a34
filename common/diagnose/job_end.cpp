#include "common/diagnose/job_end.hpp"

#include <charconv>
#include <sys/wait.h>

namespace acme::diagnose {

ExitStatus from_wait_status(int wait_status) noexcept {
    if (WIFSIGNALED(wait_status)) return {0, WTERMSIG(wait_status)};
    if (WIFEXITED(wait_status)) return {WEXITSTATUS(wait_status), 0};
    return {};
}

std::optional<ExitStatus> parse_exit_code2(std::string_view text) noexcept {
    auto colon = text.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    auto number = [](std::string_view part) -> std::optional<int> {
        int value = 0;
        auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
        if (part.empty() || ec != std::errc{} || end != part.data() + part.size()) return std::nullopt;
        if (value < 0 || value > 255) return std::nullopt;
        return value;
    };
    auto code = number(text.substr(0, colon));
    auto signal = number(text.substr(colon + 1));
    if (!code || !signal) return std::nullopt;
    return ExitStatus{*code, *signal};
}

}  // namespace acme::diagnose
