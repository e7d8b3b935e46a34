#include "evalsched/core/suite.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "evalsched/core/command_template.hpp"
#include "evalsched/core/duration.hpp"

namespace acme::evalsched {
namespace {

// Every key [suite] may hold: the defaults and wrappers, the serving keys (parse_serving) and
// the suite groups' scorer (parse_group_suite_keys).
constexpr std::string_view kSuiteKeys[] = {"name",          "command",        "metric_command", "bundle_command", "gpus",
                                           "shard",         "env",            "setup",          "stage",          "serve_command",
                                           "client_command", "serve_probe",   "serve_timeout",  "group_metric_command"};

// env names are exported by a shell: a portable identifier, not one of the variables the trial
// wrapper itself relies on.
bool valid_env_name(std::string_view name) {
    if (name.empty() || name.size() > 128 || std::isdigit(static_cast<unsigned char>(name.front()))) return false;
    if (name.starts_with("EVALSCHED_") || name.starts_with("SLURM_")) return false;
    return std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::string single_quoted(std::string_view s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}
// What the serving keys' templates (issue 18, parse_serving) may mention.
constexpr std::string_view kServePlaceholders[] = {"checkpoint", "gpus", "port"};
constexpr std::string_view kClientPlaceholders[] = {"checkpoint", "dataset", "shard", "num_shards", "output", "gpus", "samples", "base_url"};

// Every key a [[dataset]] may hold; leaves and aggregate make it a suite group (evalsched-suite(5)
// GROUPS), read by parse_group.
constexpr std::string_view kDatasetKeys[] = {"name", "kind", "command", "metric_command", "gpus", "samples", "prior", "shard", "leaves", "aggregate"};
constexpr std::size_t kMaxLeaves = 1000;

int line_of(const toml::node& node) { return static_cast<int>(node.source().begin.line); }

std::string key_list(std::span<const std::string_view> keys) {
    std::string out;
    for (auto k : keys) out += fmt::format("{}{}", out.empty() ? "" : ", ", k);
    return out;
}

// Names are used in paths and job names, so they stay in a shell- and path-safe alphabet.
bool valid_name(std::string_view name) {
    if (name.empty() || name.size() > 64) return false;
    if (!std::isalnum(static_cast<unsigned char>(name.front()))) return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    });
}

// toml++ 3.3.0 (Debian 12) has two inputs it does not survive, both found by
// tests/fuzz/suite_fuzz and both undefined behaviour in release builds:
//  - a table header whose '[' is not followed by a key ("[\nsuite]", "[(suite]"): parse_key
//    assumes it is (TOML_ASSERT_ASSUME);
//  - some non-ASCII characters where it looks for whitespace (U+00A1 ... U+0499 among them):
//    is_non_ascii_horizontal_whitespace reaches TOML_UNREACHABLE;
//  - a '}' where an array expects a value ("a = [}]"): parse_value assumes it cannot be.
// Suites need neither, so they are refused here before toml++ sees the text: non-ASCII is
// allowed only in comments and single-line strings. The lexing tracks strings, comments and
// bracket nesting, nothing more.
struct Pitfall {
    int line;
    std::string message;
};

std::optional<Pitfall> toml_pitfall(std::string_view text) {
    int line = 1;
    std::string nesting;  // the open '[' and '{' of values, innermost last
    bool line_start = true;
    char prev = '\n';    // the last significant character outside strings and comments
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a leading BOM is fine: toml++ skips it
    auto non_ascii = [](char c) { return static_cast<unsigned char>(c) >= 0x80; };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n') {
            ++line;
            line_start = true;
            prev = '\n';
            continue;
        }
        if (c == '#') {
            while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
            continue;
        }
        if (c == '"' || c == '\'') {
            // toml++ scans a bare token such as 0"x" up to a terminator, through the quote:
            // a string starts only where a key or value may.
            if (std::string_view("\n=[,{.").find(prev) == std::string_view::npos)
                return Pitfall{line, "a quote in the middle of a value: put the whole value in quotes"};
            prev = '"';
            const bool multi = text.substr(i, 3) == std::string(3, c);
            const std::string close = multi ? std::string(3, c) : std::string(1, c);
            std::size_t j = i + close.size();
            while (j < text.size()) {
                if (c == '"' && text[j] == '\\') {
                    j += 2;
                    continue;
                }
                if (!multi && text[j] == '\n') break;  // unterminated: toml++ reports it
                if (text.substr(j, close.size()) == close) break;
                if (text[j] == '\n') ++line;
                if (multi && non_ascii(text[j]))
                    return Pitfall{line, "non-ASCII text in a multi-line string: use a single-line string for it"};
                ++j;
            }
            i = std::min(j + close.size() - 1, text.size());
            line_start = false;
            continue;
        }
        if (non_ascii(c)) return Pitfall{line, "non-ASCII character outside a string or comment: remove it (a stray BOM or no-break space?)"};
        if (c == ' ' || c == '\t' || c == '\r') continue;
        if (c == '[' && nesting.empty() && line_start) {
            std::size_t j = i + 1;
            if (j < text.size() && text[j] == '[') ++j;
            while (j < text.size() && (text[j] == ' ' || text[j] == '\t')) ++j;
            const char k = j < text.size() ? text[j] : '\n';
            const bool key_start = std::isalnum(static_cast<unsigned char>(k)) || k == '_' || k == '-' || k == '"' || k == '\'';
            if (!key_start && k != ']')  // ']' alone: toml++ refuses it cleanly
                return Pitfall{line, "a table header must start with its name right after the bracket: write [suite] or [[dataset]]"};
            i = j - 1;
            line_start = false;
            prev = '[';
            continue;
        }
        prev = c;
        if (c == '[' || c == '{') nesting += c;
        if (c == '}' && !nesting.empty() && nesting.back() == '[')
            return Pitfall{line, "'}' inside an array: close the array with ']' first"};
        if ((c == ']' || c == '}') && !nesting.empty()) nesting.pop_back();
        line_start = false;
    }
    return std::nullopt;
}

class Parser {
public:
    explicit Parser(std::string file) : file_(std::move(file)) {}

    [[noreturn]] void fail(int line, const std::string& message) const { throw SuiteError(file_, line, message); }

    // `command` runs dataset d (its own command, or [suite]'s client_command when serving): a
    // dataset that may be sharded hands it {shard} and {num_shards}, and {samples} needs the
    // dataset's size.
    void check_runs_dataset(const Dataset& d, const std::string& command, int line, std::string_view command_name, bool check_samples) const {
        if (d.shard && !(uses_placeholder(command, "shard") && uses_placeholder(command, "num_shards")))
            fail(line, fmt::format("dataset \"{}\" may be sharded but {} lacks {{shard}} and {{num_shards}}: add both, or set shard = false", d.name,
                                   command_name));
        if (check_samples && !d.samples && uses_placeholder(command, "samples"))
            fail(line, fmt::format("dataset \"{}\" has no samples but {} mentions {{samples}}: add samples = N (its test split's size)", d.name,
                                   command_name));
    }

    void check_keys(const toml::table& table, std::span<const std::string_view> allowed, std::string_view where) const {
        for (auto&& [key, value] : table) {
            if (std::find(allowed.begin(), allowed.end(), key.str()) == allowed.end())
                fail(static_cast<int>(key.source().begin.line),
                     fmt::format("unknown key \"{}\" in {}: remove it or use one of {}", key.str(), where, key_list(allowed)));
        }
    }

    std::string string_at(const toml::table& t, std::string_view key, std::string_view where) const {
        const toml::node* n = t.get(key);
        if (!n->is_string()) fail(line_of(*n), fmt::format("{} in {} must be a string", key, where));
        return std::string(*n->value<std::string_view>());
    }

    long integer_at(const toml::table& t, std::string_view key, std::string_view where, long lo, long hi) const {
        const toml::node* n = t.get(key);
        if (!n->is_integer()) fail(line_of(*n), fmt::format("{} in {} must be an integer", key, where));
        const auto v = *n->value<std::int64_t>();
        if (v < lo || v > hi) fail(line_of(*n), fmt::format("{} in {} is {}: use a value from {} to {}", key, where, v, lo, hi));
        return static_cast<long>(v);
    }

    bool bool_at(const toml::table& t, std::string_view key, std::string_view where) const {
        const toml::node* n = t.get(key);
        if (!n->is_boolean()) fail(line_of(*n), fmt::format("{} in {} must be true or false", key, where));
        return *n->value<bool>();
    }

    void check_command(const toml::node& n, std::string_view text, std::span<const std::string_view> allowed, std::string_view what) const {
        if (text.find_first_not_of(" \t") == std::string_view::npos) fail(line_of(n), fmt::format("{} is empty: give the command to run", what));
        try {
            check_template(text, allowed);
        } catch (const std::invalid_argument& e) {
            fail(line_of(n), fmt::format("{}: {}", what, e.what()));
        }
    }

    Suite parse(std::string_view text) {
        toml::table root;
        if (auto pitfall = toml_pitfall(text)) fail(pitfall->line, pitfall->message);
        try {
            root = toml::parse(text, file_);
        } catch (const toml::parse_error& e) {
            fail(static_cast<int>(e.source().begin.line), fmt::format("not valid TOML: {}", e.description()));
        }
        for (auto&& [key, value] : root) {
            if (key.str() != "suite" && key.str() != "dataset")
                fail(static_cast<int>(key.source().begin.line),
                     fmt::format("unknown key \"{}\" at top level: a suite has only [suite] and [[dataset]]", key.str()));
        }
        Suite suite;
        suite.file = file_;
        std::optional<std::string> default_command, default_metric;
        int default_gpus = 1;
        bool default_shard = false;
        int suite_line = 1;

        if (const toml::node* s = root.get("suite")) {
            const toml::table* t = s->as_table();
            if (!t) fail(line_of(*s), "suite must be a table: write [suite]");
            suite_line = line_of(*s);
            check_keys(*t, kSuiteKeys, "[suite]");
            parse_group_suite_keys(*t, suite);
            suite.serving = parse_serving(*t);
            if (t->contains("name")) suite.name = string_at(*t, "name", "[suite]");
            if (t->contains("command")) {
                default_command = string_at(*t, "command", "[suite]");
                check_command(*t->get("command"), *default_command, kCommandPlaceholders, "command in [suite]");
            }
            if (t->contains("metric_command")) {
                default_metric = string_at(*t, "metric_command", "[suite]");
                check_command(*t->get("metric_command"), *default_metric, kMetricPlaceholders, "metric_command in [suite]");
            }
            if (t->contains("bundle_command")) {
                suite.bundle_command = string_at(*t, "bundle_command", "[suite]");
                const toml::node& n = *t->get("bundle_command");
                check_command(n, *suite.bundle_command, kBundlePlaceholders, "bundle_command in [suite]");
                if (!uses_placeholder(*suite.bundle_command, "datasets"))
                    fail(line_of(n), "bundle_command in [suite] never mentions {datasets}: add it, or remove bundle_command");
            }
            if (t->contains("gpus")) default_gpus = static_cast<int>(integer_at(*t, "gpus", "[suite]", 1, 64));
            if (t->contains("shard")) default_shard = bool_at(*t, "shard", "[suite]");
            if (t->contains("setup")) {
                suite.setup = string_at(*t, "setup", "[suite]");
                if (suite.setup.size() > 4096) fail(line_of(*t->get("setup")), "setup in [suite] is longer than 4096 bytes: put it in a script and source that");
                if (suite.setup.find_first_of("\n\r") != std::string::npos)
                    fail(line_of(*t->get("setup")), "setup in [suite] must be one line: join the commands with && or source a script");
            }
            if (const toml::node* st = t->get("stage")) {
                const toml::array* a = st->as_array();
                if (!a || a->empty() || a->size() > 64)
                    fail(line_of(*st), "stage in [suite] must be a list of 1-64 globs: write stage = [\"*.safetensors\", \"*.json\"]");
                for (const toml::node& g : *a) {
                    const auto v = g.value<std::string>();
                    if (!g.is_string() || !v || v->empty() || v->size() > 256 || v->find_first_of(std::string("\n\r\0", 3)) != std::string::npos ||
                        (*v)[v->front() == '!' ? 1 : 0] == '/' || v->find("..") != std::string::npos)
                        fail(line_of(g), "each stage glob in [suite] is a path inside the checkpoint (no leading '/', no '..', one line, "
                                         "at most 256 bytes): write e.g. \"*.safetensors\" or \"!optimizer*\"");
                    suite.stage.push_back(*v);
                }
            }
            if (const toml::node* e = t->get("env")) {
                const toml::table* et = e->as_table();
                if (!et) fail(line_of(*e), "env in [suite] must be a table: write env = { NAME = \"value\" }");
                if (et->size() > 256) fail(line_of(*e), "env in [suite] sets more than 256 variables: source a script in setup instead");
                for (auto&& [name, value] : *et) {
                    if (!valid_env_name(name.str()))
                        fail(line_of(value), fmt::format("env name \"{}\" in [suite] is not usable: letters, digits and _, not starting with a digit, "
                                                         "not EVALSCHED_* or SLURM_*", name.str()));
                    const auto v = value.value<std::string>();
                    if (!value.is_string() || !v) fail(line_of(value), fmt::format("env {} in [suite] must be a string: write {} = \"...\"", name.str(), name.str()));
                    if (v->size() > 32768 || v->find('\0') != std::string::npos)
                        fail(line_of(value), fmt::format("env {} in [suite] is longer than 32 KiB or holds a NUL: shorten it", name.str()));
                    suite.env.emplace_back(std::string(name.str()), *v);
                }
            }
        }
        if (suite.name.empty()) {
            // The file name without directory and extension: what `evalsched report` shows.
            std::string base = file_.substr(file_.find_last_of('/') + 1);
            suite.name = base.substr(0, base.rfind(".toml"));
        }
        if (!valid_name(suite.name)) fail(suite_line, fmt::format("suite name \"{}\" must be 1-64 of A-Z a-z 0-9 . _ -", suite.name));

        const toml::node* ds = root.get("dataset");
        if (!ds) fail(suite_line, "no [[dataset]] entries: a suite needs at least one dataset");
        const toml::array* arr = ds->as_array();
        if (!arr || !arr->is_array_of_tables()) fail(line_of(*ds), "dataset must be an array of tables: write [[dataset]]");

        std::map<std::string, int, std::less<>> seen;
        for (const toml::node& entry : *arr) {
            const toml::table& t = *entry.as_table();
            const int line = line_of(entry);
            Dataset d;
            d.line = line;
            if (!t.contains("name")) fail(line, "[[dataset]] has no name: add name = \"...\"");
            d.name = string_at(t, "name", "[[dataset]]");
            if (!valid_name(d.name)) fail(line_of(*t.get("name")), fmt::format("dataset name \"{}\" must be 1-64 of A-Z a-z 0-9 . _ -", d.name));
            const std::string where = fmt::format("dataset \"{}\"", d.name);
            check_keys(t, kDatasetKeys, where);
            if (auto [it, fresh] = seen.emplace(d.name, line); !fresh)
                fail(line, fmt::format("dataset \"{}\" is already defined at line {}: rename or remove one of them", d.name, it->second));

            if (!t.contains("kind"))
                fail(line, fmt::format("{} has no kind: add kind = \"generation\", \"multiple_choice\", \"code_execution\" or \"judge\"", where));
            const std::string kind = string_at(t, "kind", where);
            auto k = task_kind_from(kind);
            if (!k) fail(line_of(*t.get("kind")), fmt::format("{}: kind \"{}\" is not one of generation, multiple_choice, code_execution, judge", where, kind));
            d.kind = *k;

            if (t.contains("command")) {
                d.command = string_at(t, "command", where);
                check_command(*t.get("command"), d.command, kCommandPlaceholders, fmt::format("command of {}", where));
            } else if (default_command) {
                d.command = *default_command;
            } else {
                fail(line, fmt::format("{} has no command and [suite] sets none: add command = \"...\" to one of them", where));
            }
            if (t.contains("metric_command")) {
                d.metric_command = string_at(t, "metric_command", where);
                check_command(*t.get("metric_command"), *d.metric_command, kMetricPlaceholders, fmt::format("metric_command of {}", where));
            } else {
                d.metric_command = default_metric;
            }
            d.gpus = t.contains("gpus") ? static_cast<int>(integer_at(t, "gpus", where, 1, 64)) : default_gpus;
            if (t.contains("samples")) d.samples = integer_at(t, "samples", where, 1, 100'000'000);
            if (t.contains("prior")) {
                const toml::node& n = *t.get("prior");
                std::optional<double> s;
                if (n.is_string()) s = parse_duration(*n.value<std::string_view>());
                else if (n.is_integer() || n.is_floating_point()) {
                    const double v = *n.value<double>();
                    if (v > 0 && v <= 365.0 * 86400) s = v;
                }
                if (!s) fail(line_of(n), fmt::format("prior of {} is not a duration: write seconds (600) or \"10m\", \"1h30m\"", where));
                d.prior_s = s;
            }
            d.shard = t.contains("shard") ? bool_at(t, "shard", where) : default_shard;
            // A group's {samples} is its leaves' sum, known only once parse_group reads them.
            check_runs_dataset(d, d.command, t.contains("command") ? line_of(*t.get("command")) : line, "its command", !t.contains("leaves"));
            if (t.contains("leaves") || t.contains("aggregate")) {
                parse_group(t, std::move(d), suite, seen);
                continue;
            }
            suite.datasets.push_back(std::move(d));
        }
        if (!suite.groups.empty() && !suite.group_metric_command)
            fail(suite.groups.front().line, fmt::format("dataset \"{}\" lists leaves but [suite] has no group_metric_command to score the group: add one "
                                                       "(e.g. \"acme-eval-lmeval aggregate --group {{dataset}} --leaves {{leaves}} --leaf-samples "
                                                       "{{leaf_samples}} --aggregate {{aggregate}} --out {{output}}\")",
                                                       suite.groups.front().name));
        if (suite.serving)
            for (const Dataset& d : suite.datasets)
                check_runs_dataset(d, suite.serving->client_command, suite.serving->line, "client_command in [suite]", true);
        return suite;
    }

    // --- suite groups (evalsched-suite(5) GROUPS) ----------------------------------------------

    void parse_group_suite_keys(const toml::table& t, Suite& suite) const {
        if (!t.contains("group_metric_command")) return;
        suite.group_metric_command = string_at(t, "group_metric_command", "[suite]");
        const toml::node& n = *t.get("group_metric_command");
        check_command(n, *suite.group_metric_command, kGroupMetricPlaceholders, "group_metric_command in [suite]");
        if (!uses_placeholder(*suite.group_metric_command, "leaves"))
            fail(line_of(n), "group_metric_command in [suite] never mentions {leaves}: add it, so the command knows which leaf tasks to combine");
    }

    // `group` is the [[dataset]] as parsed so far (its settings are the leaves'). Its leaves go
    // into suite.datasets in its place, each with the group's kind, commands, GPUs, shard flag
    // and a share of its samples and prior:
    //   leaves = ["a", "b"]          samples (if given) split evenly, the remainder to the first
    //   leaves = { a = 100, b = 57 } (or a [dataset.leaves] table) each leaf's own test-split
    //                                size; the group's samples, if given, must be their sum
    // The prior is split in proportion to the leaves' samples, evenly when they are unknown.
    void parse_group(const toml::table& t, Dataset group, Suite& suite, std::map<std::string, int, std::less<>>& seen) const {
        const std::string where = fmt::format("dataset \"{}\"", group.name);
        if (!t.contains("leaves"))
            fail(line_of(*t.get("aggregate")), fmt::format("aggregate in {} applies to a group only: add leaves = [...] or remove aggregate", where));
        Group g;
        g.name = group.name;
        g.kind = group.kind;
        g.line = group.line;
        if (t.contains("aggregate")) {
            const std::string a = string_at(t, "aggregate", where);
            if (a == "weight_by_size") g.aggregate = GroupAggregate::weight_by_size;
            else if (a == "mean") g.aggregate = GroupAggregate::mean;
            else fail(line_of(*t.get("aggregate")), fmt::format("aggregate of {} is \"{}\": use \"weight_by_size\" (lm-eval's weight_by_size: true) or \"mean\"", where, a));
        }
        const toml::node& ln = *t.get("leaves");
        const int at = line_of(ln);
        std::vector<std::pair<std::string, std::optional<long>>> leaves;
        auto add_leaf = [&](const toml::node& where_node, std::string name, std::optional<long> samples) {
            if (!valid_name(name)) fail(line_of(where_node), fmt::format("leaf \"{}\" of {} must be 1-64 of A-Z a-z 0-9 . _ -", name, where));
            if (auto [it, fresh] = seen.emplace(name, line_of(where_node)); !fresh)
                fail(line_of(where_node), fmt::format("leaf \"{}\" of {} is already defined at line {}: a task runs once per suite; remove one of them", name, where, it->second));
            leaves.emplace_back(std::move(name), samples);
        };
        if (const toml::array* a = ln.as_array()) {
            if (a->empty() || a->size() > kMaxLeaves)
                fail(at, fmt::format("leaves of {} must list 1 to {} leaf tasks: write leaves = [\"task_a\", \"task_b\"]", where, kMaxLeaves));
            for (const toml::node& n : *a) {
                if (!n.is_string()) fail(line_of(n), fmt::format("each leaf of {} is a task name in quotes (or write leaves as a table: name = samples)", where));
                add_leaf(n, std::string(*n.value<std::string_view>()), std::nullopt);
            }
        } else if (const toml::table* lt = ln.as_table()) {
            if (lt->empty() || lt->size() > kMaxLeaves)
                fail(at, fmt::format("leaves of {} must name 1 to {} leaf tasks: write leaves = {{ task_a = 100, task_b = 57 }}", where, kMaxLeaves));
            for (auto&& [key, value] : *lt) {
                if (!value.is_integer() || *value.value<std::int64_t>() < 1 || *value.value<std::int64_t>() > 100'000'000)
                    fail(line_of(value), fmt::format("leaf {} of {}: its value is its sample count, an integer from 1 to 100000000", key.str(), where));
                add_leaf(value, std::string(key.str()), static_cast<long>(*value.value<std::int64_t>()));
            }
        } else {
            fail(at, fmt::format("leaves of {} must be a list of task names or a table of name = samples", where));
        }
        const bool counted = leaves.front().second.has_value();
        if (counted) {
            long sum = 0;
            for (const auto& [name, n] : leaves) sum += *n;
            if (group.samples && *group.samples != sum)
                fail(at, fmt::format("the leaves of {} hold {} samples, but its samples = {}: correct one of them (or drop samples)", where, sum, *group.samples));
            group.samples = sum;
        } else if (group.samples) {
            const long n = static_cast<long>(leaves.size());
            if (*group.samples < n)
                fail(at, fmt::format("{} has {} samples for {} leaves: give each leaf its count (leaves = {{ name = samples }})", where, *group.samples, n));
            for (long i = 0; i < n; ++i) leaves[static_cast<std::size_t>(i)].second = *group.samples / n + (i < *group.samples % n ? 1 : 0);
        }
        g.samples = group.samples;
        if (!group.samples && uses_placeholder(group.command, "samples"))
            fail(at, fmt::format("the command of {} mentions {{samples}} but its leaves' sizes are unknown: write leaves = {{ name = samples }} "
                                 "or add samples = N to the group", where));
        for (const auto& [name, n] : leaves) {
            Dataset leaf = group;
            leaf.name = name;
            leaf.group = group.name;
            leaf.samples = n;
            if (group.prior_s)
                leaf.prior_s = n && group.samples ? *group.prior_s * static_cast<double>(*n) / static_cast<double>(*group.samples)
                                                  : *group.prior_s / static_cast<double>(leaves.size());
            g.leaves.push_back(name);
            g.leaf_samples.push_back(n.value_or(0));
            suite.datasets.push_back(std::move(leaf));
        }
        suite.groups.push_back(std::move(g));
    }

private:
    // serve_command, client_command, serve_probe, serve_timeout: both commands or neither.
    std::optional<Serving> parse_serving(const toml::table& t) const {
        const bool serve = t.contains("serve_command"), client = t.contains("client_command");
        if (!serve && !client) {
            for (auto k : {"serve_probe", "serve_timeout"})
                if (t.contains(k)) fail(line_of(*t.get(k)), fmt::format("{} in [suite] without serve_command: add serve_command and client_command, or remove it", k));
            return std::nullopt;
        }
        if (!serve) fail(line_of(*t.get("client_command")), "client_command in [suite] without serve_command: add serve_command = \"vllm serve {checkpoint} --port {port} ...\"");
        if (!client) fail(line_of(*t.get("serve_command")), "serve_command in [suite] without client_command: add client_command = \"... base_url={base_url} ...\"");
        Serving s;
        const toml::node& sn = *t.get("serve_command");
        const toml::node& cn = *t.get("client_command");
        s.line = line_of(sn);
        s.serve_command = string_at(t, "serve_command", "[suite]");
        check_command(sn, s.serve_command, kServePlaceholders, "serve_command in [suite]");
        if (!uses_placeholder(s.serve_command, "port"))
            fail(line_of(sn), "serve_command in [suite] never mentions {port}: the server must listen where evalschedd tells it (add --port {port})");
        s.client_command = string_at(t, "client_command", "[suite]");
        check_command(cn, s.client_command, kClientPlaceholders, "client_command in [suite]");
        if (!uses_placeholder(s.client_command, "base_url"))
            fail(line_of(cn), "client_command in [suite] never mentions {base_url}: add it (e.g. base_url={base_url}/completions)");
        if (t.contains("serve_probe")) {
            s.probe = string_at(t, "serve_probe", "[suite]");
            const bool ok = s.probe.size() >= 1 && s.probe.size() <= 256 && s.probe.front() == '/' &&
                            std::all_of(s.probe.begin(), s.probe.end(), [](char c) { return c > ' ' && c < 0x7f && c != '\'' && c != '"' && c != '\\'; });
            if (!ok) fail(line_of(*t.get("serve_probe")), "serve_probe in [suite] must be an HTTP path such as \"/health\" or \"/v1/models\" (starting with '/', at most 256 printable bytes, no quotes)");
        }
        if (const toml::node* n = t.get("serve_timeout")) {
            std::optional<double> v;
            if (n->is_string()) v = parse_duration(*n->value<std::string_view>());
            else if (n->is_integer() || n->is_floating_point()) v = *n->value<double>();
            if (!v || *v < 1 || *v > 86400) fail(line_of(*n), "serve_timeout in [suite] must be a duration from 1 s to 24 h: write seconds (600) or \"10m\"");
            s.ready_timeout_s = *v;
        }
        return s;
    }

    std::string file_;
};

}  // namespace

Suite serving_suite(const Suite& suite) {
    if (!suite.serving) return suite;
    // {base_url} becomes the step's variable; the other placeholders stay for make_trials, and
    // so do the template's literal {{ and }}.
    const std::string& c = suite.serving->client_command;
    std::string client;
    for (std::size_t i = 0; i < c.size();) {
        if (c.compare(i, 2, "{{") == 0 || c.compare(i, 2, "}}") == 0) {
            client += c.substr(i, 2);
            i += 2;
        } else if (c.compare(i, 10, "{base_url}") == 0) {
            client += "\"$EVALSCHED_BASE_URL\"";
            i += 10;
        } else {
            client += c[i++];
        }
    }
    Suite out = suite;
    out.bundle_command.reset();
    for (Dataset& d : out.datasets) d.command = client;
    return out;
}

SuiteError::SuiteError(std::string file, int line, const std::string& message)
    : std::runtime_error(fmt::format("{}:{}: {}", file, line, message)), file_(std::move(file)), line_(line) {}

std::string_view to_string(GroupAggregate a) { return a == GroupAggregate::mean ? "mean" : "weight_by_size"; }

const Dataset* Suite::find(std::string_view name) const {
    for (const auto& d : datasets)
        if (d.name == name) return &d;
    return nullptr;
}

std::string Suite::wrap(std::string_view command) const {
    if (env.empty() && setup.empty()) return std::string(command);
    // The wrapper runs with set -u; activation scripts (conda's, venv's) read unset variables.
    std::string out = "set +u; ";
    for (const auto& [name, value] : env) out += fmt::format("export {}={}; ", name, single_quoted(value));
    if (!setup.empty())
        out += fmt::format("{{ {}\n}} || {{ echo \"evalsched: the suite's setup failed: \"{} >&2; exit 1; }}; ", setup, single_quoted(setup));
    return out + std::string(command);
}

Suite parse_suite(std::string_view text, const std::string& file) { return Parser(file).parse(text); }

Suite load_suite(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw SuiteError(path, 0, "cannot read the suite file: check the path and its permissions");
    std::ostringstream buf;
    buf << in.rdbuf();
    return parse_suite(buf.str(), path);
}

}  // namespace acme::evalsched
