#include "spank/faultguard/core/gate_request.hpp"

#include <vector>

#include <fmt/format.h>

#include "common/util/parse.hpp"

namespace acme::faultguard {

namespace {

constexpr std::string_view kMagic = "acme-gate 1";

bool plain(std::string_view v) { return v.find_first_of(std::string_view("\t\n\r\0", 4)) == std::string_view::npos; }

std::vector<std::string_view> fields(std::string_view line) {
    std::vector<std::string_view> out;
    for (std::size_t start = 0;;) {
        const auto tab = line.find('\t', start);
        out.push_back(line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start));
        if (tab == std::string_view::npos) return out;
        start = tab + 1;
    }
}

std::string flat(std::string_view text) {
    std::string out(text);
    for (auto& c : out)
        if (c == '\t' || c == '\n' || c == '\r' || c == '\0') c = ' ';
    return out;
}

}  // namespace

std::optional<std::string> format_gate_request(const GateRequest& r) {
    if (!plain(r.gpus) || !plain(r.nvml) || !plain(r.rules)) return std::nullopt;
    return fmt::format("{}\tjob={}\tgpus={}\tnvml={}\trules={}\n", kMagic, r.job, r.gpus, r.nvml, r.rules);
}

std::optional<GateRequest> parse_gate_request(std::string_view line, std::string& error) {
    if (line.size() > kGateLineMax) {
        error = fmt::format("request of {} bytes (at most {})", line.size(), kGateLineMax);
        return std::nullopt;
    }
    const auto f = fields(line);
    if (f.empty() || f[0] != kMagic) {
        error = "not an acme-gate 1 request";
        return std::nullopt;
    }
    GateRequest r;
    bool job = false, gpus = false, nvml = false, rules = false;
    for (std::size_t i = 1; i < f.size(); ++i) {
        const auto eq = f[i].find('=');
        const auto key = f[i].substr(0, eq);
        const auto value = eq == std::string_view::npos ? std::string_view() : f[i].substr(eq + 1);
        if (eq == std::string_view::npos || !plain(value)) {
            error = fmt::format("field {}: want key=value", util::printable(f[i], 40));
            return std::nullopt;
        }
        bool* seen = nullptr;
        if (key == "job") {
            const auto n = util::parse_int(value);
            if (!n || *n <= 0) {
                error = fmt::format("job={}: want a job id", util::printable(value, 40));
                return std::nullopt;
            }
            r.job = *n;
            seen = &job;
        } else if (key == "gpus") {
            r.gpus = std::string(value);
            seen = &gpus;
        } else if (key == "nvml") {
            r.nvml = std::string(value);
            seen = &nvml;
        } else if (key == "rules") {
            r.rules = std::string(value);
            seen = &rules;
        } else {
            error = fmt::format("unknown field {}", util::printable(key, 40));
            return std::nullopt;
        }
        if (*seen) {
            error = fmt::format("field {} given twice", util::printable(key, 40));
            return std::nullopt;
        }
        *seen = true;
    }
    if (!job || !gpus || !nvml || !rules) {
        error = "request without job, gpus, nvml and rules";
        return std::nullopt;
    }
    return r;
}

std::string format_gate_answer(const GateAnswer& a) {
    return fmt::format("{}\t{}\n", a.passed ? "ok" : "gate", flat(a.text));
}

std::optional<GateAnswer> parse_gate_answer(std::string_view line) {
    const auto tab = line.find('\t');
    if (tab == std::string_view::npos || line.size() > kGateLineMax) return std::nullopt;
    const auto verdict = line.substr(0, tab);
    if (verdict != "ok" && verdict != "gate") return std::nullopt;
    const auto text = line.substr(tab + 1);
    if (!plain(text)) return std::nullopt;
    return GateAnswer{verdict == "ok", std::string(text)};
}

}  // namespace acme::faultguard
