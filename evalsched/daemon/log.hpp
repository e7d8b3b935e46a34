// evalschedd's log lines: one line each, a timestamp and the daemon's name first, on stderr
// (journald under systemd; the log_file when the config names one).
#pragma once

#include <cstdio>
#include <ctime>

#include <fmt/format.h>

namespace acme::evalsched {

template <typename... Args>
void log_line(fmt::format_string<Args...> format, Args&&... args) {
    char stamp[32];
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    fmt::print(stderr, "{} evalschedd: {}\n", stamp, fmt::format(format, std::forward<Args>(args)...));
    std::fflush(stderr);
}

}  // namespace acme::evalsched
