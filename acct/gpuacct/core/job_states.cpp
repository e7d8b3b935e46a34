#include "acct/gpuacct/core/job_states.hpp"

#include <array>
#include <cctype>
#include <utility>

#include <fmt/format.h>

namespace acme::acct {
namespace {

// sacct(1) JOB STATE CODES, in its order.
constexpr std::array<std::pair<std::string_view, std::string_view>, 17> kStates = {{
    {"BF", "BOOT_FAIL"},  {"CA", "CANCELLED"}, {"CD", "COMPLETED"}, {"DL", "DEADLINE"},   {"F", "FAILED"},
    {"NF", "NODE_FAIL"},  {"OOM", "OUT_OF_MEMORY"}, {"PD", "PENDING"}, {"PR", "PREEMPTED"}, {"R", "RUNNING"},
    {"RQ", "REQUEUED"},   {"RS", "RESIZING"},  {"RV", "REVOKED"},   {"S", "SUSPENDED"}, {"TO", "TIMEOUT"},
    {"CG", "COMPLETING"}, {"RD", "RESV_DEL_HOLD"},
}};

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::toupper(static_cast<unsigned char>(a[i])) != std::toupper(static_cast<unsigned char>(b[i]))) return false;
    return true;
}

std::string_view first_word(std::string_view s) { return s.substr(0, s.find(' ')); }

}  // namespace

std::optional<std::vector<std::string>> parse_state_list(std::string_view list, std::string& error) {
    std::vector<std::string> out;
    while (true) {
        const auto comma = list.find(',');
        const auto item = list.substr(0, comma);
        if (!item.empty()) {
            std::string_view found;
            for (const auto& [code, name] : kStates)
                if (iequals(item, code) || iequals(item, name)) found = name;
            if (found.empty()) {
                std::string valid;
                for (const auto& [code, name] : kStates) valid += fmt::format("{}{}", valid.empty() ? "" : ", ", code);
                std::string shown;
                for (char c : item.substr(0, 64)) shown += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
                error = fmt::format("Invalid state: \"{}\" (valid: {} or the full names)", shown, valid);
                return std::nullopt;
            }
            out.emplace_back(found);
        }
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
    }
    if (out.empty()) {
        error = "No state given to --state: give STATE[,STATE...] such as CD,F";
        return std::nullopt;
    }
    return out;
}

bool state_is(std::string_view stored, std::string_view wanted) { return first_word(stored) == wanted; }

bool state_is_failure(std::string_view stored) {
    const auto s = first_word(stored);
    if (s.empty()) return false;
    static constexpr std::array<std::string_view, 7> kNotFailed = {"COMPLETED",  "RUNNING",  "PENDING", "SUSPENDED",
                                                                   "COMPLETING", "REQUEUED", "RESIZING"};
    for (auto ok : kNotFailed)
        if (s == ok) return false;
    return true;
}

}  // namespace acme::acct
