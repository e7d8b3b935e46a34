// Times on the command line the way sacct(1) takes them for -S/--starttime and -E/--endtime,
// so an admin's habits (and scripts) carry over unchanged. Interpreted in local time (TZ).
#pragma once

#include <ctime>
#include <optional>
#include <string>
#include <string_view>

namespace acme::acct {

// Accepted: HH:MM[:SS][AM|PM], MMDD[YY][-HH:MM[:SS]], MM.DD[.YY][-HH:MM[:SS]],
// MM/DD[/YY][-HH:MM[:SS]], YYYY-MM-DD[THH:MM[:SS]], today, midnight, noon, elevenses (11:00),
// fika (15:00), teatime (16:00), tomorrow, now[{+|-}COUNT[seconds|minutes|hours|days|weeks]]
// (also the singular and sacct's short forms: s, sec, min, h, hour, d, day, w, week), and a
// bare Unix epoch of 10 digits. A time of day alone means today; a date without a year means
// the most recent such date (sacct's rule: never in the future for -S).
// nullopt on bad input; error then says what was wrong in one phrase.
std::optional<std::time_t> parse_sacct_time(std::string_view text, std::time_t now, std::string& error);

// "2026-11-29T23:27:06", local time, as sacct prints Submit/Start/End. Empty for 0.
std::string format_sacct_time(double epoch);

// sacct's Elapsed: [DD-]HH:MM:SS.
std::string format_elapsed(double seconds);

// sacct's TotalCPU, UserCPU and SystemCPU (src/sacct/print.c _elapsed_time): D-HH:MM:SS from
// a day, HH:MM:SS from an hour, MM:SS.mmm below one with milliseconds, else 00:MM:SS.
std::string format_cpu_time(double seconds);

}  // namespace acme::acct
