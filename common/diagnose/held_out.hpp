// The rules held out from the cases they were written for (issue 40). The corpus score is what
// the rules say of the logs they were written from; a first-sight record says what they said of a
// batch before any rule was written for it, but only once, with the rules of that day. This is
// the figure between them that any change can be measured on, without new cases: split every log
// rule into its wordings (the top-level alternatives of its pattern; each keeps the rule's id,
// reason, priority, `unless` and `near`), find which corpus cases each wording matches, and score
// each case as if the wordings only its own source repository's cases match (leave one
// repository out), or only its own batch's cases match (leave one batch out), did not exist. A
// wording that two repositories' logs share generalised at least once and stays. The estimate is
// pessimistic for a general wording that so far has one case, and blind to per-case priorities
// and `unless` clauses, which stay.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/diagnose/corpus.hpp"
#include "common/diagnose/rules.hpp"

namespace acme::diagnose::held_out {

// The top-level alternatives of an RE2 pattern, each a pattern of its own: a leading inline flag
// group ("(?i)") that applies to the alternatives after it is copied to the front of each.
std::vector<std::string> split_alternatives(std::string_view pattern);

struct Wordings {
    RuleSet rules;                          // one log rule per wording, in the rules' order
    std::vector<std::size_t> rule_of;       // wording -> index of its rule in the original log rules
    std::vector<std::vector<std::size_t>> cases_of;  // wording -> the corpus cases it matches
    std::vector<std::vector<std::size_t>> of_case;   // case -> the wordings that match it
};

// Splits the rules and matches every wording against every case (one pass of one scanner each).
Wordings match(const RuleSet& rules, const std::vector<corpus::Case>& cases);

// Whose each wording is: the one key all the cases it matches share (their source repository, or
// their batch), or empty when it matches none or cases of two keys. `key_of` gives each case's
// key ("" for a case that has none: it makes the wordings it matches nobody's).
std::vector<std::string> owners(const Wordings& w, const std::vector<std::string>& key_of);

// The wordings owned by `key` (none for an empty key), as Engine::diagnose_without takes them.
std::vector<bool> owned_by(const std::vector<std::string>& owners, const std::string& key);

}  // namespace acme::diagnose::held_out
