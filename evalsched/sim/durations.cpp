#include "evalsched/sim/durations.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace acme::evalsched::sim {
namespace {

constexpr std::size_t kMaxBytes = 1 << 20;  // a suite has tens of datasets, not megabytes of them
constexpr double kMaxSeconds = 30 * 86400.0;

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\r')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

}  // namespace

std::map<std::string, double> parse_durations(std::string_view text, const std::string& source) {
    if (text.size() > kMaxBytes) throw std::invalid_argument(fmt::format("{}: larger than {} bytes: a durations file has one line per dataset", source, kMaxBytes));
    std::map<std::string, double> out;
    std::size_t line_no = 0;
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        ++line_no;
        if (trim(line).empty() || trim(line).front() == '#') continue;
        const std::size_t tab = line.find('\t');
        if (tab == std::string_view::npos)
            throw std::invalid_argument(fmt::format("{} line {}: no tab: write dataset<TAB>seconds", source, line_no));
        const std::string name(trim(line.substr(0, tab)));
        const std::string value(trim(line.substr(tab + 1)));
        if (name.empty()) throw std::invalid_argument(fmt::format("{} line {}: no dataset name before the tab", source, line_no));
        if (name.find('\0') != std::string::npos || value.find('\0') != std::string::npos)
            throw std::invalid_argument(fmt::format("{} line {}: a NUL byte: the file must be text", source, line_no));
        char* end = nullptr;
        errno = 0;
        const double seconds = std::strtod(value.c_str(), &end);
        if (value.empty() || end != value.c_str() + value.size() || errno != 0 || !std::isfinite(seconds) || seconds <= 0 || seconds > kMaxSeconds)
            throw std::invalid_argument(fmt::format("{} line {}: \"{}\" for {} is not a number of seconds: write a positive number up to {:g}",
                                                    source, line_no, value, name, kMaxSeconds));
        if (!out.emplace(name, seconds).second)
            throw std::invalid_argument(fmt::format("{} line {}: {} is listed twice: keep one line per dataset", source, line_no, name));
    }
    return out;
}

std::map<std::string, double> load_durations(const std::string& path, const Suite& suite) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::invalid_argument(fmt::format("--durations {}: cannot read it: give the path of a dataset<TAB>seconds file", path));
    std::string text;
    text.resize(kMaxBytes + 1);
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    auto out = parse_durations(text, path);
    for (const auto& d : suite.datasets)
        if (!out.count(d.name)) throw std::invalid_argument(fmt::format("{}: no line for dataset {} of suite {}: add \"{}<TAB>seconds\"", path, d.name, suite.name, d.name));
    for (const auto& [name, s] : out) {
        bool known = false;
        for (const auto& d : suite.datasets) known = known || d.name == name;
        if (!known) throw std::invalid_argument(fmt::format("{}: dataset {} is not in suite {}: remove the line or use the suite it came from", path, name, suite.name));
    }
    return out;
}

}  // namespace acme::evalsched::sim
