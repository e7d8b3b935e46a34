#include "common/diagnose/rules.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (fmt 11 keeps it here only)
#include <toml++/toml.h>

#include "common/diagnose/pattern.hpp"

namespace acme::diagnose {
namespace {

// Reads one [[rule]]/[[status]]/[[gpu_event]] table (or the [fallback] table). Every key must
// be one this kind knows, so a typo ("priorty") is an error instead of a silently ignored setting.
class Reader {
public:
    Reader(const toml::table& table, std::string_view source, std::string_view kind,
           std::set<std::string_view> known)
        : table_(table), source_(source), kind_(kind) {
        for (auto&& [key, value] : table) {
            if (!known.contains(key.str()))
                fail(value, fmt::format("unknown key \"{}\" in {}", key.str(), title()),
                     fmt::format("use one of: {}", fmt::join(known, ", ")));
        }
    }

    std::string title() const { return kind_ == "fallback" ? "[fallback]" : fmt::format("[[{}]]", kind_); }

    [[noreturn]] void fail(const toml::node& node, std::string_view problem, std::string_view todo) const {
        throw RuleError(fmt::format("{}:{}: {}: {}", source_, node.source().begin.line, problem, todo));
    }
    [[noreturn]] void fail(std::string_view problem, std::string_view todo) const { fail(table_, problem, todo); }

    std::string origin() const { return fmt::format("{}:{}", source_, table_.source().begin.line); }

    const toml::node* get(std::string_view key) const { return table_.get(key); }

    std::optional<std::string> string(std::string_view key) const {
        const toml::node* node = get(key);
        if (!node) return std::nullopt;
        if (!node->is_string()) fail(*node, fmt::format("\"{}\" must be a string", key), "quote it");
        return std::string(*node->value<std::string_view>());
    }

    std::string required_string(std::string_view key) const {
        auto value = string(key);
        if (!value || value->empty())
            fail(fmt::format("[[{}]] has no \"{}\"", kind_, key), fmt::format("add {} = \"...\"", key));
        return *value;
    }

    std::optional<std::int64_t> integer(std::string_view key, std::int64_t lo, std::int64_t hi) const {
        const toml::node* node = get(key);
        if (!node) return std::nullopt;
        auto value = node->value_exact<std::int64_t>();
        if (!value || *value < lo || *value > hi)
            fail(*node, fmt::format("\"{}\" must be an integer from {} to {}", key, lo, hi), "fix the value");
        return *value;
    }

    std::optional<double> fraction(std::string_view key) const {
        const toml::node* node = get(key);
        if (!node) return std::nullopt;
        auto value = node->value<double>();  // accepts 1 as well as 1.0
        if (!value || !(*value >= 0.0 && *value <= 1.0))
            fail(*node, fmt::format("\"{}\" must be a number from 0 to 1", key), "fix the value");
        return *value;
    }

    std::optional<bool> boolean(std::string_view key) const {
        const toml::node* node = get(key);
        if (!node) return std::nullopt;
        if (!node->is_boolean()) fail(*node, fmt::format("\"{}\" must be true or false", key), "fix the value");
        return *node->value<bool>();
    }

    template <typename Int>
    std::vector<Int> integers(std::string_view key, std::int64_t lo, std::int64_t hi) const {
        std::vector<Int> out;
        const toml::node* node = get(key);
        if (!node) return out;
        const toml::array* array = node->as_array();
        if (!array || array->empty())
            fail(*node, fmt::format("\"{}\" must be a non-empty array of integers", key), "e.g. [1, 2]");
        for (const toml::node& item : *array) {
            auto value = item.value_exact<std::int64_t>();
            if (!value || *value < lo || *value > hi)
                fail(item, fmt::format("\"{}\" holds a value outside {}..{}", key, lo, hi), "fix the value");
            out.push_back(static_cast<Int>(*value));
        }
        return out;
    }

    std::string pattern(std::string_view key, bool required) const {
        auto text = required ? required_string(key) : string(key).value_or("");
        if (text.empty()) return text;
        std::string error;
        if (!compile_pattern(text, error))
            fail(*get(key), fmt::format("\"{}\" is not a valid RE2 pattern ({})", key, error),
                 "fix the regular expression (RE2 syntax: no backreferences or lookaround)");
        return text;
    }

    void common(RuleCommon& rule) const {
        rule.id = required_string("id");
        rule.origin = origin();
        auto reason = required_string("reason");
        rule.reason = find_reason(reason);
        if (!rule.reason || rule.reason->name == "unknown")
            fail(*get("reason"), fmt::format("rule \"{}\" has unknown reason \"{}\"", rule.id, reason),
                 "use a reason from `faultdiag --reasons`");
        rule.priority = static_cast<int>(integer("priority", 0, 1000).value_or(rule.priority));
        rule.confidence = fraction("confidence").value_or(rule.confidence);
        if (auto action = string("action")) {
            rule.action = parse_action(*action);
            if (!rule.action)
                fail(*get("action"), fmt::format("unknown action \"{}\"", *action),
                     "use requeue, drain, fix_code or none");
        }
    }

private:
    const toml::table& table_;
    std::string_view source_;
    std::string_view kind_;
};

const std::set<std::string_view> kCommonKeys = {"id", "reason", "priority", "confidence", "action"};

std::set<std::string_view> with_common(std::set<std::string_view> keys) {
    keys.insert(kCommonKeys.begin(), kCommonKeys.end());
    return keys;
}

LogRule read_log_rule(const Reader& in) {
    LogRule rule;
    in.common(rule);
    rule.pattern = in.pattern("pattern", true);
    rule.unless = in.pattern("unless", false);
    rule.near = in.pattern("near", false);
    rule.within = static_cast<int>(in.integer("within", 1, 10000).value_or(rule.within));
    if (in.get("within") && rule.near.empty())
        in.fail(*in.get("within"), fmt::format("rule \"{}\" sets \"within\" without \"near\"", rule.id),
                "add near = '...' or remove within");
    rule.exit_codes = in.integers<int>("exit_codes", 0, 255);
    rule.generic = in.boolean("generic").value_or(false);
    return rule;
}

StatusRule read_status_rule(const Reader& in) {
    StatusRule rule;
    in.common(rule);
    rule.exit_codes = in.integers<int>("exit_codes", 0, 255);
    rule.signals = in.integers<int>("signals", 1, 64);
    rule.oom_kill = in.boolean("oom_kill");
    rule.time_limit = in.boolean("time_limit");
    rule.cancelled = in.boolean("cancelled");
    rule.node_failure = in.boolean("node_failure");
    rule.stalled = in.boolean("stalled");
    rule.stall_named = in.boolean("stall_named");
    if (rule.exit_codes.empty() && rule.signals.empty() && !rule.oom_kill && !rule.time_limit &&
        !rule.cancelled && !rule.node_failure && !rule.stalled && !rule.stall_named)
        in.fail(fmt::format("[[status]] \"{}\" has no condition", rule.id),
                "add exit_codes, signals, oom_kill, time_limit, cancelled, node_failure or stalled");
    return rule;
}

GpuEventRule read_gpu_event_rule(const Reader& in) {
    GpuEventRule rule;
    in.common(rule);
    rule.kind = in.required_string("kind");
    rule.codes = in.integers<std::int64_t>("codes", 0, 1'000'000);
    return rule;
}

// One row of the XID table: the driver's codes and what they mean for the job and the node.
// It becomes a [[gpu_event]] rule (the sampler saw the code on one of the job's GPUs) and a
// [[rule]] for the driver's own line in the log, with any prefix (dmesg's "[123.4]", syslog's
// "kernel:"), with or without "NVRM:", and for "caused by previous Xid N" on a later line.
// No codes: every code no other row names (the row's priority should then be low).
void read_xid(const Reader& in, RuleSet& out) {
    LogRule log;
    in.common(log);
    auto codes = in.integers<std::int64_t>("codes", 0, 1'000'000);
    std::string alternatives = "\\d+";
    if (!codes.empty()) alternatives = fmt::format("{}", fmt::join(codes, "|"));
    log.pattern = fmt::format("\\bXid \\((?:PCI:)?[0-9A-Fa-f:.]+\\): ({})\\b|caused by previous Xid ({})\\b",
                              alternatives, alternatives);
    std::vector<std::string> sources = {"log", "gpu_event"};
    if (const toml::node* node = in.get("sources")) {
        sources.clear();
        const toml::array* array = node->as_array();
        if (!array || array->empty())
            in.fail(*node, "\"sources\" must be a non-empty array", "use [\"log\"], [\"gpu_event\"] or both");
        for (const toml::node& item : *array) {
            auto name = item.value<std::string>();
            if (!name || (*name != "log" && *name != "gpu_event"))
                in.fail(item, "\"sources\" holds something other than \"log\" or \"gpu_event\"", "fix the value");
            sources.push_back(*name);
        }
    }
    auto wants = [&](std::string_view source) { return std::find(sources.begin(), sources.end(), source) != sources.end(); };
    if (wants("gpu_event")) {
        GpuEventRule event;
        static_cast<RuleCommon&>(event) = log;
        event.id += ".event";
        event.kind = "xid";
        event.codes = codes;
        out.gpu_event.push_back(std::move(event));
    }
    if (wants("log")) out.log.push_back(std::move(log));
}

template <typename Fn>
void each_table(const toml::table& root, std::string_view key, std::string_view source, Fn&& fn) {
    const toml::node* node = root.get(key);
    if (!node) return;
    const toml::array* array = node->as_array();
    if (!array || !array->is_array_of_tables())
        throw RuleError(fmt::format("{}:{}: \"{}\" must be written [[{}]]: make it an array of tables",
                                    source, node->source().begin.line, key, key));
    for (const toml::node& item : *array) fn(*item.as_table());
}

}  // namespace

void FallbackKeys::override_with(const FallbackKeys& other) {
    if (other.threshold) threshold = other.threshold;
    if (other.tie_breaker) tie_breaker = other.tie_breaker;
    if (other.tie_margin) tie_margin = other.tie_margin;
    if (other.overrule) overrule = other.overrule;
}

void RuleSet::merge(RuleSet&& other) {
    std::set<std::string> ids;
    auto note = [&](const RuleCommon& rule) {
        if (!ids.insert(rule.id).second)
            throw RuleError(fmt::format("{}: rule id \"{}\" is defined twice: rename one of them",
                                        rule.origin, rule.id));
    };
    for (auto* set : {this, &other}) {
        for (const auto& rule : set->log) note(rule);
        for (const auto& rule : set->status) note(rule);
        for (const auto& rule : set->gpu_event) note(rule);
    }
    std::move(other.log.begin(), other.log.end(), std::back_inserter(log));
    std::move(other.status.begin(), other.status.end(), std::back_inserter(status));
    std::move(other.gpu_event.begin(), other.gpu_event.end(), std::back_inserter(gpu_event));
    fallback.override_with(other.fallback);
}

RuleSet parse_rules(std::string_view text, std::string_view source) {
    toml::table root;
    try {
        root = toml::parse(text, source);
    } catch (const toml::parse_error& error) {
        throw RuleError(fmt::format("{}:{}: not valid TOML ({}): fix the syntax", source,
                                    error.source().begin.line, error.description()));
    }
    for (auto&& [key, value] : root) {
        if (key != "rule" && key != "status" && key != "gpu_event" && key != "xid" && key != "fallback")
            throw RuleError(fmt::format("{}:{}: unknown table \"{}\": use [[rule]], [[status]], [[gpu_event]], [[xid]] "
                                        "or [fallback]",
                                        source, value.source().begin.line, key.str()));
    }
    RuleSet set;  // merged one rule at a time so a duplicate id names its own line
    each_table(root, "rule", source, [&](const toml::table& table) {
        Reader in(table, source, "rule",
                  with_common({"pattern", "unless", "near", "within", "exit_codes", "generic"}));
        RuleSet one;
        one.log.push_back(read_log_rule(in));
        set.merge(std::move(one));
    });
    each_table(root, "status", source, [&](const toml::table& table) {
        Reader in(table, source, "status",
                  with_common({"exit_codes", "signals", "oom_kill", "time_limit", "cancelled", "node_failure",
                               "stalled", "stall_named"}));
        RuleSet one;
        one.status.push_back(read_status_rule(in));
        set.merge(std::move(one));
    });
    each_table(root, "gpu_event", source, [&](const toml::table& table) {
        Reader in(table, source, "gpu_event", with_common({"kind", "codes"}));
        RuleSet one;
        one.gpu_event.push_back(read_gpu_event_rule(in));
        set.merge(std::move(one));
    });
    each_table(root, "xid", source, [&](const toml::table& table) {
        Reader in(table, source, "xid", with_common({"codes", "sources", "name"}));
        if (auto name = in.get("name"); name && !name->is_string())
            in.fail(*name, "\"name\" must be a string", "quote it");
        RuleSet one;
        read_xid(in, one);
        set.merge(std::move(one));
    });
    if (const toml::node* node = root.get("fallback")) {
        const toml::table* table = node->as_table();
        if (!table)
            throw RuleError(fmt::format("{}:{}: \"fallback\" must be written [fallback]: make it one table", source,
                                        node->source().begin.line));
        Reader in(*table, source, "fallback", {"threshold", "tie_breaker", "tie_margin", "overrule"});
        set.fallback.threshold = in.fraction("threshold");
        set.fallback.overrule = in.fraction("overrule");
        set.fallback.tie_breaker = in.boolean("tie_breaker");
        if (auto margin = in.integer("tie_margin", 0, 1000)) set.fallback.tie_margin = static_cast<int>(*margin);
    }
    return set;
}

RuleSet load_rules_dir(const std::filesystem::path& dir) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        throw RuleError(fmt::format("{}: rules directory not found: pass --rules DIR or install the default rules",
                                    dir.string()));
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
        if (entry.path().extension() == ".toml" && entry.is_regular_file(ec)) files.push_back(entry.path());
    }
    if (ec) throw RuleError(fmt::format("{}: cannot list rules directory ({}): check its permissions", dir.string(), ec.message()));
    if (files.empty())
        throw RuleError(fmt::format("{}: no *.toml rule files: add rule files or point --rules at another directory",
                                    dir.string()));
    std::sort(files.begin(), files.end());
    RuleSet all;
    for (const auto& file : files) {
        std::ifstream in(file, std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        if (!in)
            throw RuleError(fmt::format("{}: cannot read rule file: check its permissions", file.string()));
        all.merge(parse_rules(text.str(), file.string()));
    }
    return all;
}

}  // namespace acme::diagnose
