// sacct's job state names and their short forms for -s/--state ("CD", "f", "timeout").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace acme::acct {

// "CD,F,timeout" -> {"COMPLETED", "FAILED", "TIMEOUT"}. nullopt on an unknown state; error
// names it and lists the valid ones.
std::optional<std::vector<std::string>> parse_state_list(std::string_view list, std::string& error);

// A stored state matches a wanted name on its first word ("CANCELLED by 0" is CANCELLED).
bool state_is(std::string_view stored, std::string_view wanted);

// The states of a run that did not finish well (everything but COMPLETED and the live ones).
bool state_is_failure(std::string_view stored);

}  // namespace acme::acct
