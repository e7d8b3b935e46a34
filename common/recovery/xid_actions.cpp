#include "common/recovery/xid_actions.hpp"

#include <algorithm>

namespace acme::recovery {

bool XidActions::drains(std::int64_t code) const {
    if (std::find(drain.begin(), drain.end(), code) != drain.end()) return true;
    return drain_any && std::find(named.begin(), named.end(), code) == named.end();
}

XidActions builtin_xid_actions(std::string why) {
    XidActions a;
    // rules/15-xid.toml's rows with action = "drain": gpu_lost, ecc, nvlink, critical.
    a.drain = {79, 48, 64, 94, 95, 140, 74, 144, 145, 146, 147, 148, 149, 150, 32, 38, 57, 58, 61, 62, 69, 109, 119, 120, 154};
    a.named = a.drain;
    a.source = std::move(why);
    return a;
}

std::optional<XidActions> xid_actions_from_rules(const diagnose::RuleSet& rules) {
    XidActions a;
    a.source = "rules";
    bool any_row = false;
    for (const auto& r : rules.gpu_event) {
        if (r.kind != "xid" || !r.id.ends_with(".event")) continue;
        any_row = true;
        const auto action = r.action.value_or(r.reason->action);
        a.named.insert(a.named.end(), r.codes.begin(), r.codes.end());
        if (action != diagnose::Action::drain) continue;
        if (r.codes.empty()) a.drain_any = true;
        a.drain.insert(a.drain.end(), r.codes.begin(), r.codes.end());
    }
    if (!any_row) return std::nullopt;
    return a;
}

XidActions load_xid_actions(const std::string& rules_dir) noexcept {
    try {
        const auto rules = diagnose::load_rules_dir(rules_dir);
        if (auto a = xid_actions_from_rules(rules)) return *a;
        return builtin_xid_actions("built-in list (no [[xid]] table in " + rules_dir + ")");
    } catch (const std::exception& e) {
        try {
            return builtin_xid_actions(std::string("built-in list (rules not loaded: ") + e.what() + ")");
        } catch (...) {
        }
    } catch (...) {
    }
    return builtin_xid_actions();
}

}  // namespace acme::recovery
