// Which XIDs on one of a job's GPUs are hardware evidence that drains the node: the rows of
// the rules' [[xid]] table (rules/15-xid.toml, and any site file after it) whose action is
// drain, so the table is the one place that says what a code means, for the diagnosis and
// for recovery and the health gate alike. When the rules cannot be loaded or hold no [[xid]]
// row, a built-in copy of the shipped table's drain codes is used, and said so.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/diagnose/rules.hpp"

namespace acme::recovery {

struct XidActions {
    std::vector<std::int64_t> drain;  // codes that drain
    bool drain_any = false;           // a drain row without codes: every code no other row names
    std::vector<std::int64_t> named;  // every code some row names (for drain_any)
    std::string source;               // "rules" or "built-in list (<why>)"
    bool drains(std::int64_t code) const;
};

// The shipped table's drain codes (a unit test keeps it equal to rules/15-xid.toml's).
XidActions builtin_xid_actions(std::string why = "built-in list");

// From loaded rules: their [[xid]] rows' GPU-event rules (id "<row>.event", kind "xid").
// nullopt when the rules hold no such row.
std::optional<XidActions> xid_actions_from_rules(const diagnose::RuleSet& rules);

// Loads the rules directory; the built-in list when it cannot be read or has no [[xid]] row.
XidActions load_xid_actions(const std::string& rules_dir) noexcept;

}  // namespace acme::recovery
