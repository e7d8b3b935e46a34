#include "acct/faultdiag/rule_suggestion.hpp"

#include <fmt/format.h>

#include "common/diagnose/llm_client.hpp"
#include "common/diagnose/log_scan.hpp"
#include "common/diagnose/rule_draft.hpp"
#include "common/diagnose/taxonomy.hpp"

namespace acme::faultdiag {

DraftedRule suggest_rule(const RuleSuggestion& ask) {
    const diagnose::ReasonInfo* reason = nullptr;
    std::string line, why;
    const auto& stored = ask.stored;
    const bool model = stored && diagnose::from_model(*stored);
    if (model)
        for (const auto& e : stored->evidence)
            if (e.source == "llm" && line.empty()) {
                line = e.text;
                why = fmt::format("job {}: answer of model {} ({}), line {}", ask.job, diagnose::model_name(*stored),
                                  stored->reason, e.line);
            }
    if (!ask.label.empty()) {
        const std::string& text = ask.label;
        const auto slash = text.find('/');
        const std::string category = slash == std::string::npos ? std::string() : text.substr(0, slash);
        reason = diagnose::find_reason(slash == std::string::npos ? text : text.substr(slash + 1));
        if (!reason || reason->name == "unknown")
            return {2, "", fmt::format("--label {}: not a CATEGORY/REASON of the taxonomy: run `faultdiag --reasons` for the list", text)};
        if (!category.empty() && category != diagnose::to_string(reason->category))
            return {2, "", fmt::format("--label {}: reason {} is {}, not {}: fix the category", text, reason->name,
                                       diagnose::to_string(reason->category), category)};
        if (line.empty() && !ask.log.empty()) {
            // The last line that reads as an error: what a person looking at the tail labels.
            const diagnose::Lines lines(ask.log);
            const auto errors = diagnose::error_lines(ask.log, lines, 1);
            if (!errors.empty()) line = std::string(lines.line(errors.front().line));
        }
        if (line.empty() && stored)
            for (const auto& e : stored->evidence)
                if (e.line > 0 && line.empty()) line = e.text;
        why = fmt::format("job {}: labelled {}/{} by {}", ask.job, diagnose::to_string(reason->category), reason->name, ask.who);
    } else if (model) {
        reason = diagnose::find_reason(stored->reason);
    } else {
        throw NoDraft(stored ? fmt::format("job {}: its diagnosis ({}) is the rules', not a model's: give --label "
                                           "CATEGORY/REASON to draft a rule from its evidence",
                                           ask.job, stored->reason)
                             : fmt::format("job {}: no stored diagnosis found: give --label CATEGORY/REASON and its log file",
                                           ask.job));
    }
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!reason || line.find_first_not_of(" \t") == std::string::npos)
        throw NoDraft(fmt::format("job {}: no evidence line to draft a rule from: give its log file", ask.job));
    const auto draft = diagnose::draft_rule(*reason, line, fmt::format("site.{}.{}", reason->name, ask.job), why);
    if (!draft.matches)
        return {1, draft.toml, fmt::format("job {}: {}: edit the pattern before using the draft", ask.job, draft.problem)};
    return {0, draft.toml, ""};
}

}  // namespace acme::faultdiag
