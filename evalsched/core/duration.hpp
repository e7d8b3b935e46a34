// Durations as people write them in suite files ("90s", "12m", "1h30m") and as Slurm wants
// them in --time ("D-HH:MM:SS"). Seconds are doubles everywhere else in evalsched.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace acme::evalsched {

// "45", "45s", "12m", "1h30m", "2h", "1d2h": a positive number of seconds, or nullopt when the
// text is not one of these forms (the caller names the file and line).
std::optional<double> parse_duration(std::string_view text);

// Slurm's --time for a limit of `seconds`, rounded UP to whole minutes: Slurm's time limits
// have minute resolution, and rounding down would kill a trial just before it finishes.
std::string slurm_time(double seconds);

// Short human form for reports: "42s", "7m05s", "2h03m".
std::string human_duration(double seconds);

}  // namespace acme::evalsched
