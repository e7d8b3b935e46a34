// `faultdiag --suggest-rule`: a draft TOML rule for a failure the rules did not name, from a
// model's accepted answer (its evidence line) or from a person's CATEGORY/REASON label and the
// job's evidence line. Pure: cli.cpp gathers the job's stored diagnosis and log.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "common/diagnose/engine.hpp"

namespace acme::faultdiag {

struct RuleSuggestion {
    std::int64_t job = 0;
    std::optional<diagnose::Diagnosis> stored;  // the job's stored diagnosis, if any
    std::string log;                            // the job's log, or ""
    std::string label;                          // --label: "CATEGORY/REASON" or "REASON"; "": the model's answer
    std::string who;                            // who labelled it, for the draft's comment
};

struct DraftedRule {
    int status = 0;       // faultdiag's exit: 0 a draft that matches its line, 1 one to edit, 2 a bad --label
    std::string toml;     // the draft (status 0 or 1)
    std::string message;  // the line for standard error, without "faultdiag: " ("" with status 0)
};

// Nothing to draft from (no label and no model's answer, or no evidence line); what() is the line.
struct NoDraft : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Throws NoDraft.
DraftedRule suggest_rule(const RuleSuggestion& ask);

}  // namespace acme::faultdiag
