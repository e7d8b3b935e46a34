// Diagnosis rules as data: the TOML files of rules.d (shipped defaults in rules/ of the tree).
// This file parses and validates them; engine.hpp compiles them. A rule file is either wholly
// valid or refused with one line naming the file, the line and what to change.
//
//   [[rule]]          a pattern in the log tail (RE2 syntax, one line, ^ and $ per line)
//   id = "py.value_error"  reason = "value_error"  pattern = '\bValueError: '
//   priority = 30     higher wins; among equals the earliest line wins (the first error)
//   confidence = 0.8  before corroboration
//   unless = '...'    the line is not evidence when this also matches it (warnings, retries)
//   near = '...'      needs this within `within` lines before or after (default 30)
//   exit_codes = [1]  exit codes that corroborate it
//   action = "drain"  overrides the reason's default action
//   generic = true    the rule decides by an exception class alone (RuntimeError, OSError):
//                     the learned fallback may overrule it (engine.hpp)
//
//   [[status]]        how the job ended: exit_codes, signals, oom_kill, time_limit,
//                     cancelled, node_failure, stalled, stall_named (all that are given
//                     must hold)
//   [[gpu_event]]     kind = "xid" with codes = [79], or kind = "ecc_dbe"
//   [[xid]]           a row of the XID table: codes = [48, 64], reason, action, priority;
//                     becomes a [[gpu_event]] rule (id + ".event") and a [[rule]] for the
//                     driver's "Xid (PCI:...): N" line with any prefix, and "caused by previous
//                     Xid N". sources = ["log"] keeps the sampler's event out; no codes: any code
//   [fallback]        settings of the learned fallback (fallback.hpp, engine.hpp), over the
//                     model file's: threshold = 0.95, tie_breaker = true, tie_margin = 0,
//                     overrule = 0.8. A later file's key overrides an earlier file's.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/diagnose/taxonomy.hpp"

namespace acme::diagnose {

// A rule file that cannot be used; what() is "<file>:<line>: <problem>: <what to do>".
class RuleError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct RuleCommon {
    std::string id;
    const ReasonInfo* reason = nullptr;  // never null once parsed
    int priority = 50;                   // 0..1000
    double confidence = 0.8;             // 0..1
    std::optional<Action> action;        // overrides reason->action
    std::string origin;                  // "<file>:<line>", for messages
};

struct LogRule : RuleCommon {
    std::string pattern;
    std::string unless;  // empty: none
    std::string near;    // empty: none
    int within = 30;
    std::vector<int> exit_codes;
    bool generic = false;  // decides by an exception class alone: the fallback may overrule it
};

struct StatusRule : RuleCommon {
    std::vector<int> exit_codes;
    std::vector<int> signals;
    std::optional<bool> oom_kill;
    std::optional<bool> time_limit;
    std::optional<bool> cancelled;
    std::optional<bool> node_failure;
    std::optional<bool> stalled;      // the sampler found the running job stalled
    std::optional<bool> stall_named;  // ... and named a node that diverged
};

struct GpuEventRule : RuleCommon {
    std::string kind;
    std::vector<std::int64_t> codes;  // empty: any code
};

// A rules directory's [fallback] keys; unset: the model's own or the engine's default.
struct FallbackKeys {
    std::optional<double> threshold;  // 0..1: the probability the fallback must reach to answer
    std::optional<bool> tie_breaker;  // let it choose between tied rules of different categories
    std::optional<int> tie_margin;    // 0..1000: how far below the top priority a rule still ties
    std::optional<double> overrule;   // 0..1: the probability at which it overrules a generic rule (1: never)
    // Sets what other sets.
    void override_with(const FallbackKeys& other);
};

struct RuleSet {
    std::vector<LogRule> log;
    std::vector<StatusRule> status;
    std::vector<GpuEventRule> gpu_event;
    FallbackKeys fallback;

    bool empty() const noexcept { return log.empty() && status.empty() && gpu_event.empty(); }
    // Appends other's rules, and its [fallback] keys over these; throws RuleError on an id both
    // define.
    void merge(RuleSet&& other);
};

// Parses one rule file's text; `source` names it in errors.
RuleSet parse_rules(std::string_view text, std::string_view source);

// Loads every *.toml in dir, in name order (so 50-site.toml can follow 10-infrastructure.toml).
RuleSet load_rules_dir(const std::filesystem::path& dir);

}  // namespace acme::diagnose
