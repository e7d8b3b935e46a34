#include "acct/gpuacct/core/format_spec.hpp"

#include <cctype>
#include <charconv>

#include <fmt/format.h>

namespace acme::acct {
namespace {

bool same_name(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
    return true;
}

// Only printable ASCII is echoed back, so a garbage argument cannot garble the terminal.
std::string printable(std::string_view s) {
    std::string out;
    for (char c : s.substr(0, 64)) out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
    if (s.size() > 64) out += "...";
    return out;
}

}  // namespace

std::optional<std::vector<FieldSpec>> parse_format_spec(std::string_view spec, std::span<const std::string_view> known,
                                                        std::string& error) {
    std::vector<FieldSpec> out;
    error.clear();
    while (true) {
        const auto comma = spec.find(',');
        std::string_view entry = spec.substr(0, comma);
        // sacct tolerates spaces around entries ("-o 'JobID, State'").
        while (!entry.empty() && entry.front() == ' ') entry.remove_prefix(1);
        while (!entry.empty() && entry.back() == ' ') entry.remove_suffix(1);
        if (!entry.empty()) {
            const auto percent = entry.find('%');
            const std::string_view name = entry.substr(0, percent);
            const std::string_view* match = nullptr;
            for (const auto& k : known)
                if (same_name(k, name)) match = &k;
            if (!match) {
                error = fmt::format("Invalid field requested: \"{}\"", printable(name));
                return std::nullopt;
            }
            FieldSpec field{*match, std::nullopt};
            if (percent != std::string_view::npos) {
                const std::string_view w = entry.substr(percent + 1);
                int width = 0;
                const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), width);
                if (w.empty() || ec != std::errc() || end != w.data() + w.size() || width == 0 || width > 1024 ||
                    width < -1024) {
                    error = fmt::format("Invalid field width in \"{}\": give FIELD%N with N from 1 to 1024 (-N: left-justified)",
                                        printable(entry));
                    return std::nullopt;
                }
                field.width = width;
            }
            out.push_back(field);
        }
        if (comma == std::string_view::npos) break;
        spec.remove_prefix(comma + 1);
    }
    if (out.empty()) {
        error = "No fields requested: give --format=FIELD[%WIDTH],... (gpuacct --helpformat lists them)";
        return std::nullopt;
    }
    return out;
}

}  // namespace acme::acct
