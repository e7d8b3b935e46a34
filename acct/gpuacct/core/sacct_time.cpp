#include "acct/gpuacct/core/sacct_time.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace acme::acct {
namespace {

bool all_digits(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    return true;
}

std::optional<int> number(std::string_view s) {
    if (!all_digits(s) || s.size() > 9) return std::nullopt;
    int value = 0;
    std::from_chars(s.data(), s.data() + s.size(), value);
    return value;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::tm local(std::time_t t) {
    std::tm tm{};
    localtime_r(&t, &tm);
    return tm;
}

// mktime normalises out-of-range fields; a date that changes under it (Feb 30) was invalid.
std::optional<std::time_t> make_time(int year, int mon, int day, int hour, int min, int sec) {
    if (mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59 || sec > 60) return std::nullopt;
    std::tm tm{};
    tm.tm_year = year - 1900;
    tm.tm_mon = mon - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = min;
    tm.tm_sec = sec;
    tm.tm_isdst = -1;
    const std::time_t t = std::mktime(&tm);
    if (t == -1 || tm.tm_mday != day || tm.tm_mon != mon - 1) return std::nullopt;
    return t;
}

struct Clock {
    int hour = 0, min = 0, sec = 0;
};

// HH:MM[:SS][AM|PM]
std::optional<Clock> parse_clock(std::string_view s) {
    std::string t = lower(s);
    int add = 0;
    bool twelve = false;
    if (t.size() > 2 && (t.ends_with("am") || t.ends_with("pm"))) {
        twelve = true;
        add = t.ends_with("pm") ? 12 : 0;
        t.resize(t.size() - 2);
    }
    std::array<std::string_view, 3> parts{};
    std::string_view rest = t;
    int n = 0;
    while (n < 3) {
        const auto colon = rest.find(':');
        parts[static_cast<size_t>(n++)] = rest.substr(0, colon);
        if (colon == std::string_view::npos) break;
        rest.remove_prefix(colon + 1);
        if (n == 3) return std::nullopt;
    }
    if (n < 2) return std::nullopt;
    Clock c;
    auto h = parts[0].size() <= 2 ? number(parts[0]) : std::nullopt;
    auto m = parts[1].size() == 2 ? number(parts[1]) : std::nullopt;
    int sec = 0;
    if (n == 3) {
        const auto s = parts[2].size() == 2 ? number(parts[2]) : std::nullopt;
        if (!s) return std::nullopt;
        sec = *s;
    }
    if (!h || !m) return std::nullopt;
    c.hour = *h;
    c.min = *m;
    c.sec = sec;
    if (twelve) {
        if (c.hour < 1 || c.hour > 12) return std::nullopt;
        c.hour = c.hour % 12 + add;
    }
    if (c.hour > 23 || c.min > 59 || c.sec > 59) return std::nullopt;
    return c;
}

std::optional<long long> unit_seconds(std::string_view unit) {
    const std::string u = lower(unit);
    if (u.empty() || u == "s" || u == "sec" || u == "secs" || u == "second" || u == "seconds") return 1;
    if (u == "m" || u == "min" || u == "mins" || u == "minute" || u == "minutes") return 60;
    if (u == "h" || u == "hour" || u == "hours") return 3600;
    if (u == "d" || u == "day" || u == "days") return 86400;
    if (u == "w" || u == "week" || u == "weeks") return 7 * 86400;
    return std::nullopt;
}

std::optional<std::time_t> parse_now(std::string_view s, std::time_t now, std::string& error) {
    s.remove_prefix(3);
    if (s.empty()) return now;
    const int sign = s[0] == '+' ? 1 : s[0] == '-' ? -1 : 0;
    if (!sign) {
        error = "expected now, now-COUNT[UNIT] or now+COUNT[UNIT]";
        return std::nullopt;
    }
    s.remove_prefix(1);
    size_t digits = 0;
    while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
    const auto count = number(s.substr(0, digits));
    const auto unit = unit_seconds(s.substr(digits));
    if (!count) {
        error = "now+/- needs a count";
        return std::nullopt;
    }
    if (!unit) {
        error = "unknown unit (seconds, minutes, hours, days or weeks)";
        return std::nullopt;
    }
    return now + sign * static_cast<std::time_t>(*count) * *unit;
}

// The date part of MMDD[YY], MM.DD[.YY], MM/DD[/YY] or YYYY-MM-DD. year 0: not given.
struct Date {
    int year = 0, mon = 0, day = 0;
};

std::optional<Date> parse_date(std::string_view s) {
    if (s.size() == 10 && s[4] == '-' && s[7] == '-') {
        auto y = number(s.substr(0, 4)), m = number(s.substr(5, 2)), d = number(s.substr(8, 2));
        if (y && m && d) return Date{*y, *m, *d};
        return std::nullopt;
    }
    if (all_digits(s) && (s.size() == 4 || s.size() == 6)) {
        Date d{0, *number(s.substr(0, 2)), *number(s.substr(2, 2))};
        if (s.size() == 6) d.year = 2000 + *number(s.substr(4, 2));
        return d;
    }
    for (char sep : {'.', '/'}) {
        const auto a = s.find(sep);
        if (a == std::string_view::npos) continue;
        const auto b = s.find(sep, a + 1);
        auto m = a <= 2 ? number(s.substr(0, a)) : std::nullopt;
        auto d = number(s.substr(a + 1, b == std::string_view::npos ? std::string_view::npos : b - a - 1));
        std::optional<int> y = 0;
        if (b != std::string_view::npos) {
            const auto ys = s.substr(b + 1);
            y = ys.size() == 2 ? number(ys) : std::nullopt;
            if (y) *y += 2000;
        }
        if (m && d && y && s.substr(a + 1).size() >= 1) return Date{*y, *m, *d};
        return std::nullopt;
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::time_t> parse_sacct_time(std::string_view text, std::time_t now, std::string& error) {
    error.clear();
    if (text.empty()) {
        error = "empty time";
        return std::nullopt;
    }
    const std::string word = lower(text);
    const std::tm today = local(now);
    auto at_today = [&](int h, int m, int s) { return make_time(today.tm_year + 1900, today.tm_mon + 1, today.tm_mday, h, m, s); };
    if (word.starts_with("now")) return parse_now(word, now, error);
    if (word == "today" || word == "midnight") return at_today(0, 0, 0);
    if (word == "noon") return at_today(12, 0, 0);
    if (word == "elevenses") return at_today(11, 0, 0);
    if (word == "fika") return at_today(15, 0, 0);
    if (word == "teatime") return at_today(16, 0, 0);
    if (word == "tomorrow") {
        auto t = at_today(0, 0, 0);
        if (t) t = make_time(today.tm_year + 1900, today.tm_mon + 1, today.tm_mday + 1, 0, 0, 0).value_or(*t + 86400);
        return t;
    }
    if (word.size() == 10 && all_digits(word) && word[0] != '0') {
        long long epoch = 0;
        std::from_chars(word.data(), word.data() + word.size(), epoch);
        return static_cast<std::time_t>(epoch);
    }
    if (word.find(':') != std::string::npos && word.find_first_of("-/.t") == std::string::npos) {
        if (auto c = parse_clock(word)) {
            if (auto t = at_today(c->hour, c->min, c->sec)) return t;
        }
        error = "bad time of day (HH:MM[:SS][AM|PM])";
        return std::nullopt;
    }
    // Split date from time: 'T' after an ISO date, '-' after the other date forms.
    std::string_view date_part = word, clock_part;
    if (word.size() > 10 && word[4] == '-' && word[7] == '-') {
        if (word[10] != 't') {
            error = "expected YYYY-MM-DD[THH:MM[:SS]]";
            return std::nullopt;
        }
        date_part = std::string_view(word).substr(0, 10);
        clock_part = std::string_view(word).substr(11);
    } else if (!(word.size() == 10 && word[4] == '-')) {
        const auto dash = word.find('-');
        if (dash != std::string::npos) {
            date_part = std::string_view(word).substr(0, dash);
            clock_part = std::string_view(word).substr(dash + 1);
        }
    }
    const auto date = parse_date(date_part);
    if (!date) {
        error = "not a time sacct accepts (YYYY-MM-DD[THH:MM[:SS]], MMDD[YY], MM/DD[/YY], HH:MM[:SS], now-1days ...)";
        return std::nullopt;
    }
    Clock clock;
    if (!clock_part.empty()) {
        auto c = parse_clock(clock_part);
        if (!c) {
            error = "bad time of day after the date (HH:MM[:SS])";
            return std::nullopt;
        }
        clock = *c;
    }
    int year = date->year;
    if (year == 0) {
        // sacct: a date without a year is this year's, or last year's when that is still ahead.
        year = today.tm_year + 1900;
        auto t = make_time(year, date->mon, date->day, clock.hour, clock.min, clock.sec);
        if (t && *t > now) --year;
    }
    auto t = make_time(year, date->mon, date->day, clock.hour, clock.min, clock.sec);
    if (!t) error = "no such date";
    return t;
}

std::string format_sacct_time(double epoch) {
    if (!(epoch > 0)) return {};
    const std::tm tm = local(static_cast<std::time_t>(epoch));
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                       tm.tm_min, tm.tm_sec);
}

std::string format_elapsed(double seconds) {
    if (!(seconds > 0) || !std::isfinite(seconds)) return "00:00:00";
    auto s = static_cast<long long>(std::llround(seconds));
    const long long days = s / 86400;
    s %= 86400;
    if (days) return fmt::format("{}-{:02}:{:02}:{:02}", days, s / 3600, s / 60 % 60, s % 60);
    return fmt::format("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
}

std::string format_cpu_time(double seconds) {
    if (!(seconds > 0) || !std::isfinite(seconds)) return "00:00:00";
    long long s = static_cast<long long>(std::floor(seconds));
    long long usec = std::llround((seconds - static_cast<double>(s)) * 1e6);
    if (usec >= 1000000) {
        ++s;
        usec -= 1000000;
    }
    const long long ms = usec / 1000, days = s / 86400, hours = s / 3600 % 24, minutes = s / 60 % 60, secs = s % 60;
    if (days) return fmt::format("{}-{:02}:{:02}:{:02}", days, hours, minutes, secs);
    if (hours) return fmt::format("{:02}:{:02}:{:02}", hours, minutes, secs);
    if (ms) return fmt::format("{:02}:{:02}.{:03}", minutes, secs, ms);
    return fmt::format("00:{:02}:{:02}", minutes, secs);
}

}  // namespace acme::acct
