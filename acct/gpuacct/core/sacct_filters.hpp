// sacct's job filters that gpuacct applies to the jobs it read (slurmdbd's rows or the spools'):
// -N/--nodelist, --name, -q/--qos, -g/--gid, -k/-K (time limits), -M/-L (clusters),
// -x/--associations. Pure; the values come parsed from the command line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace acme::acct {

inline constexpr std::uint32_t kUnlimited = 0xffffffffu;

// Slurm's time_str2mins, as sacct reads -k/-K: "MINUTES", "MINUTES:SECONDS", "HH:MM:SS",
// "DAYS-HH", "DAYS-HH:MM", "DAYS-HH:MM:SS"; seconds round up to a minute. "UNLIMITED" and
// "INFINITE" are no limit: kUnlimited (slurmdbd's INFINITE). nullopt with one line in `error` on bad text.
std::optional<std::uint32_t> parse_time_limit(std::string_view text, std::string& error);

// sacct's rule (slurmdbd's SQL): -k alone selects jobs whose limit is exactly that; -k with -K
// a limit from min to max inclusive; -K alone selects nothing out (slurmdbd ignores it). A job
// without a limit (unlimited) has slurmdbd's INFINITE, above every finite bound.
bool time_limit_matches(std::optional<std::uint32_t> job_limit_min, bool unlimited,
                        std::optional<std::uint32_t> min, std::optional<std::uint32_t> max);

}  // namespace acme::acct
