// How a rule pattern is compiled, in one place so the rule parser validates a pattern exactly
// as the engine will run it: RE2 (linear time, no backtracking blow-up on hostile logs), bytes
// as Latin-1 so invalid UTF-8 in a log never stops a match, ^ and $ at line boundaries.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <re2/re2.h>

namespace acme::diagnose {

RE2::Options pattern_options();

// The text RE2 compiles for a rule pattern ("(?m)" + pattern).
std::string pattern_source(std::string_view pattern);

// Compiles a rule pattern; on a bad pattern returns null and sets error to RE2's words.
std::unique_ptr<RE2> compile_pattern(std::string_view pattern, std::string& error);

}  // namespace acme::diagnose
