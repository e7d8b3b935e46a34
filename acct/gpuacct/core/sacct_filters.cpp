#include "acct/gpuacct/core/sacct_filters.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

#include <fmt/format.h>

namespace acme::acct {
namespace {

constexpr std::uint64_t kInfinite = 0xffffffffu;  // slurmdbd's INFINITE

std::optional<std::uint64_t> number(std::string_view s) {
    std::uint64_t v = 0;
    if (s.empty() || s.size() > 9) return std::nullopt;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return v;
}

std::vector<std::string_view> colon_parts(std::string_view s) {
    std::vector<std::string_view> out;
    while (true) {
        const auto c = s.find(':');
        out.push_back(s.substr(0, c));
        if (c == std::string_view::npos) break;
        s.remove_prefix(c + 1);
    }
    return out;
}

}  // namespace

std::optional<std::uint32_t> parse_time_limit(std::string_view text, std::string& error) {
    error.clear();
    std::string lower;
    for (char c : text.substr(0, 32)) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "unlimited" || lower == "infinite" || lower == "-1") return kUnlimited;
    auto bad = [&] {
        std::string shown;
        for (char c : text.substr(0, 32)) shown += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
        error = fmt::format("Invalid time limit: \"{}\": give MINUTES, MM:SS, HH:MM:SS, DAYS-HH[:MM[:SS]] or UNLIMITED", shown);
        return std::nullopt;
    };
    std::uint64_t days = 0, hours = 0, minutes = 0, seconds = 0;
    std::string_view rest = text;
    const auto dash = rest.find('-');
    if (dash != std::string_view::npos) {
        const auto d = number(rest.substr(0, dash));
        if (!d) return bad();
        days = *d;
        const auto parts = colon_parts(rest.substr(dash + 1));
        if (parts.size() > 3) return bad();
        std::uint64_t v[3] = {0, 0, 0};
        for (size_t i = 0; i < parts.size(); ++i) {
            const auto n = number(parts[i]);
            if (!n) return bad();
            v[i] = *n;
        }
        hours = v[0];
        minutes = v[1];
        seconds = v[2];
    } else {
        const auto parts = colon_parts(rest);
        if (parts.empty() || parts.size() > 3) return bad();
        std::uint64_t v[3] = {0, 0, 0};
        for (size_t i = 0; i < parts.size(); ++i) {
            const auto n = number(parts[i]);
            if (!n) return bad();
            v[i] = *n;
        }
        if (parts.size() == 1) minutes = v[0];
        else if (parts.size() == 2) {
            minutes = v[0];
            seconds = v[1];
        } else {
            hours = v[0];
            minutes = v[1];
            seconds = v[2];
        }
    }
    const std::uint64_t total = days * 24 * 60 + hours * 60 + minutes + (seconds + 59) / 60;
    if (total >= kInfinite) return bad();
    return static_cast<std::uint32_t>(total);
}

bool time_limit_matches(std::optional<std::uint32_t> job_limit_min, bool unlimited, std::optional<std::uint32_t> min,
                        std::optional<std::uint32_t> max) {
    if (!min) return true;
    const std::uint64_t limit = unlimited ? kInfinite : job_limit_min.value_or(0);
    if (!max) return limit == *min;
    return limit >= *min && limit <= *max;
}

}  // namespace acme::acct
