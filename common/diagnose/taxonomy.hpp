// The failure taxonomy: the paper's Table 3 reasons plus what a cluster adds, each with its
// category and the action an operator takes. Rule files name reasons; this table is the one
// place that says what a reason means, so a rule can never invent a category.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace acme::diagnose {

enum class Category { infrastructure, framework, script, unknown };
enum class Action { requeue, drain, fix_code, none };

struct ReasonInfo {
    std::string_view name;     // as stored and printed: "out_of_memory"
    Category category;
    Action action;             // the default; a rule may override it
    std::string_view summary;  // one line for `faultdiag --reasons`
};

// Every reason, "unknown" last.
std::span<const ReasonInfo> reasons() noexcept;
const ReasonInfo* find_reason(std::string_view name) noexcept;
const ReasonInfo& unknown_reason() noexcept;

std::string_view to_string(Category category) noexcept;
std::string_view to_string(Action action) noexcept;
std::optional<Action> parse_action(std::string_view name) noexcept;

}  // namespace acme::diagnose
