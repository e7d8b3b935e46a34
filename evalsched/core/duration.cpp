#include "evalsched/core/duration.hpp"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace acme::evalsched {

std::optional<double> parse_duration(std::string_view text) {
    if (text.empty()) return std::nullopt;
    double total = 0;
    bool any = false;
    char last_unit = 0;
    while (!text.empty()) {
        double value = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || end == text.data() || !std::isfinite(value) || value < 0) return std::nullopt;
        text.remove_prefix(static_cast<std::size_t>(end - text.data()));
        double unit = 1;
        char u = 's';
        if (!text.empty()) {
            u = text.front();
            text.remove_prefix(1);
            switch (u) {
                case 's': unit = 1; break;
                case 'm': unit = 60; break;
                case 'h': unit = 3600; break;
                case 'd': unit = 86400; break;
                default: return std::nullopt;
            }
        } else if (any) {
            return std::nullopt;  // "1h30" is ambiguous: say "1h30m"
        }
        // Units must go from large to small, each once: "30m1h" is a typo, not 90 minutes.
        auto rank = [](char c) { return c == 'd' ? 4 : c == 'h' ? 3 : c == 'm' ? 2 : 1; };
        if (last_unit && rank(u) >= rank(last_unit)) return std::nullopt;
        last_unit = u;
        total += value * unit;
        any = true;
    }
    if (!any || total <= 0 || total > 365.0 * 86400) return std::nullopt;
    return total;
}

std::string slurm_time(double seconds) {
    long minutes = static_cast<long>(std::ceil(std::max(seconds, 1.0) / 60.0 - 1e-9));
    if (minutes < 1) minutes = 1;
    const long days = minutes / 1440;
    const long hours = (minutes % 1440) / 60;
    const long mins = minutes % 60;
    if (days > 0) return fmt::format("{}-{:02}:{:02}:00", days, hours, mins);
    return fmt::format("{:02}:{:02}:00", hours, mins);
}

std::string human_duration(double seconds) {
    if (!std::isfinite(seconds)) return "inf";
    const long s = std::lround(std::max(seconds, 0.0));
    if (s < 60) return fmt::format("{}s", s);
    if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
    return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

}  // namespace acme::evalsched
