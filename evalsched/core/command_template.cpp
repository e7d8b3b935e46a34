#include "evalsched/core/command_template.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace acme::evalsched {
namespace {

// Calls on_text for literal runs and on_name for each {name}; throws on bad braces.
template <typename OnText, typename OnName>
void scan(std::string_view text, OnText&& on_text, OnName&& on_name) {
    std::size_t i = 0;
    while (i < text.size()) {
        const char c = text[i];
        if (c == '{') {
            if (i + 1 < text.size() && text[i + 1] == '{') {
                on_text(std::string_view("{"));
                i += 2;
                continue;
            }
            const auto close = text.find('}', i + 1);
            if (close == std::string_view::npos)
                throw std::invalid_argument(fmt::format("unclosed '{{' at column {}: close it with '}}' or write '{{{{' for a literal brace", i + 1));
            on_name(text.substr(i + 1, close - i - 1));
            i = close + 1;
        } else if (c == '}') {
            if (i + 1 < text.size() && text[i + 1] == '}') {
                on_text(std::string_view("}"));
                i += 2;
                continue;
            }
            throw std::invalid_argument(fmt::format("stray '}}' at column {}: write '}}}}' for a literal brace", i + 1));
        } else {
            const auto next = text.find_first_of("{}", i);
            const auto end = next == std::string_view::npos ? text.size() : next;
            on_text(text.substr(i, end - i));
            i = end;
        }
    }
}

}  // namespace

std::vector<std::string> check_template(std::string_view text, std::span<const std::string_view> allowed) {
    std::vector<std::string> names;
    scan(text, [](std::string_view) {}, [&](std::string_view name) {
        if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
            std::string choices;
            for (auto a : allowed) choices += fmt::format("{}{{{}}}", choices.empty() ? "" : " ", a);
            throw std::invalid_argument(fmt::format("unknown placeholder {{{}}}: use one of {}", name, choices));
        }
        names.emplace_back(name);
    });
    return names;
}

bool uses_placeholder(std::string_view text, std::string_view name) {
    bool found = false;
    try {
        scan(text, [](std::string_view) {}, [&](std::string_view n) { found = found || n == name; });
    } catch (const std::invalid_argument&) {
        return false;
    }
    return found;
}

std::string render_template(std::string_view text, const std::map<std::string, std::string, std::less<>>& values) {
    std::string out;
    out.reserve(text.size() + 64);
    scan(text, [&](std::string_view lit) { out += lit; }, [&](std::string_view name) {
        auto it = values.find(name);
        if (it == values.end()) throw std::invalid_argument(fmt::format("no value for placeholder {{{}}}", name));
        out += it->second;
    });
    return out;
}

}  // namespace acme::evalsched
