// faultdiag --suggest-rule: a draft [[rule]] (rules/*.toml format) from one evidence line and
// the reason a model gave or a person labelled, for the admin to review and copy into
// rules.d. The line is redacted first (a secret never lands in a rule file), then escaped into
// an RE2 pattern with what varies between runs generalised: numbers, hex ids, redacted values;
// a leading timestamp or "[rank N]" prefix is dropped. The draft is checked: it must parse as a
// rule file and its pattern must match the line it came from.
#pragma once

#include <string>
#include <string_view>

#include "common/diagnose/taxonomy.hpp"

namespace acme::diagnose {

// The RE2 pattern for one evidence line.
std::string evidence_pattern(std::string_view line);

struct RuleDraft {
    std::string toml;     // comments + one [[rule]] table
    bool matches = false; // the draft, compiled as a rule file, finds its reason in the line
    std::string problem;  // why not, when !matches
};

// `id` is the rule's id ("site.network_error.42"); `why` one comment line on where it came
// from ("job 42: model qwen2.5 answered, line 17").
RuleDraft draft_rule(const ReasonInfo& reason, std::string_view evidence_line, std::string_view id, std::string_view why);

}  // namespace acme::diagnose
