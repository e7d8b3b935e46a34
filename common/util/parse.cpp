#include "common/util/parse.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

namespace acme::util {

std::optional<double> parse_double(std::string_view text) {
    if (text.empty() || text.size() > 64) return std::nullopt;
    double value = 0;
    const auto* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || ptr != end || !std::isfinite(value)) return std::nullopt;
    return value;
}

std::optional<std::int64_t> parse_int(std::string_view text) {
    if (text.empty() || text.size() > 32) return std::nullopt;
    std::int64_t value = 0;
    const auto* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || ptr != end) return std::nullopt;
    return value;
}

std::optional<bool> parse_bool(std::string_view text) {
    std::string lower(text.substr(0, 8));
    if (text.size() > 8) return std::nullopt;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    for (const char* yes : {"1", "true", "yes", "y", "on"})
        if (lower == yes) return true;
    for (const char* no : {"0", "false", "no", "n", "off"})
        if (lower == no) return false;
    return std::nullopt;
}

std::optional<std::pair<std::string, std::string>> split_key_value(std::string_view text) {
    const auto eq = text.find('=');
    if (eq == std::string_view::npos || eq == 0) return std::nullopt;
    return std::pair{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

std::string printable(std::string_view text, std::size_t max) {
    std::string out(text.substr(0, max));
    for (auto& c : out)
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    if (text.size() > max) out += "...";
    return out;
}

std::vector<std::string> split_list(std::string_view text, char separator) {
    std::vector<std::string> out;
    while (!text.empty()) {
        const auto end = std::min(text.find(separator), text.size());
        if (end > 0) out.emplace_back(text.substr(0, end));
        text.remove_prefix(std::min(end + 1, text.size()));
    }
    return out;
}

std::optional<std::vector<int>> parse_id_list(std::string_view text, std::size_t max_count) {
    std::vector<int> ids;
    if (text.empty()) return ids;
    std::size_t start = 0;
    while (start <= text.size()) {
        const auto comma = text.find(',', start);
        const auto item = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        const auto dash = item.find('-');
        const auto first = parse_int(item.substr(0, dash));
        const auto last = dash == std::string_view::npos ? first : parse_int(item.substr(dash + 1));
        if (!first || !last || *first < 0 || *last < *first || *last > 1'000'000) return std::nullopt;
        if (ids.size() + static_cast<std::size_t>(*last - *first + 1) > max_count) return std::nullopt;
        for (auto id = *first; id <= *last; ++id) ids.push_back(static_cast<int>(id));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return ids;
}

}  // namespace acme::util
