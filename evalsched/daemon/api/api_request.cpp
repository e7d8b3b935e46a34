#include "evalsched/daemon/api/api_request.hpp"

#include "evalsched/core/user_environment.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace acme::evalsched {
namespace {

std::optional<std::int64_t> parse_id(std::string_view s) {
    std::int64_t v = 0;
    if (s.empty() || s.size() > 18) return std::nullopt;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || v <= 0) return std::nullopt;
    return v;
}

std::string last_component(std::string_view path) {
    while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
    const auto slash = path.rfind('/');
    return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string parent_component(std::string_view path) {
    while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
    const auto slash = path.rfind('/');
    if (slash == std::string_view::npos || slash == 0) return {};
    return last_component(path.substr(0, slash));
}

}  // namespace

std::string printable(std::string_view text, std::size_t max) {
    std::string out;
    const std::size_t n = std::min(text.size(), max);
    for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        // C1 controls (U+0080-U+009F) are terminal escapes too, as UTF-8 C2 80-9F.
        const bool c1 = c == 0xc2 && i + 1 < n && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                        static_cast<unsigned char>(text[i + 1]) <= 0x9f;
        if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
        else if (c1) out += fmt::format("\\xc2\\x{:02x}", static_cast<unsigned char>(text[++i]));
        else out += static_cast<char>(c);
    }
    if (text.size() > max) out += fmt::format("... ({} bytes)", text.size());
    return out;
}

bool valid_name(std::string_view name) {
    if (name.empty() || name.size() > 64 || name[0] == '.') return false;
    for (char c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) return false;
    return true;
}

std::optional<PathArgs> match_path(std::string_view pattern, std::string_view path, std::string_view bad_argument) {
    PathArgs args;
    while (!pattern.empty()) {
        if (path.empty() || pattern[0] != '/' || path[0] != '/') return std::nullopt;
        pattern.remove_prefix(1);
        path.remove_prefix(1);
        const auto pattern_end = pattern.find('/');
        const std::string_view want = pattern.substr(0, pattern_end);
        const bool last = pattern_end == std::string_view::npos;
        const bool placeholder = want == "{id}" || want == "{name}";
        const auto path_end = placeholder && last ? std::string_view::npos : path.find('/');
        const std::string_view got = path.substr(0, path_end);
        if (!placeholder) {
            if (got != want) return std::nullopt;
        } else if (want == "{id}") {
            const auto id = parse_id(got);
            if (!id) throw RequestError(fmt::format(fmt::runtime(bad_argument), printable(got, 40)));
            args.id = *id;
        } else {
            if (!got.empty() && !valid_name(got)) throw RequestError(fmt::format(fmt::runtime(bad_argument), printable(got, 40)));
            args.arg = std::string(got);
        }
        pattern = last ? std::string_view() : pattern.substr(pattern_end);
        path = path_end == std::string_view::npos ? std::string_view() : path.substr(path_end);
    }
    if (!path.empty()) return std::nullopt;
    return args;
}

SubmitRequest parse_submit(std::string_view body) {
    using nlohmann::json;
    json j = json::parse(body, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw RequestError("request body is not a JSON object: send {\"checkpoint\": ..., \"suite\": ...}");
    auto text = [&](const char* key, bool required) -> std::string {
        auto it = j.find(key);
        if (it == j.end() || it->is_null()) {
            if (required) throw RequestError(fmt::format("field '{}' is missing: send it as a string", key));
            return {};
        }
        if (!it->is_string()) throw RequestError(fmt::format("field '{}' must be a string", key));
        return it->get<std::string>();
    };
    auto number = [&](const char* key) -> double {
        auto it = j.find(key);
        if (it == j.end() || it->is_null()) return 0;
        if (!it->is_number()) throw RequestError(fmt::format("field '{}' must be a number", key));
        const double v = it->get<double>();
        if (!(v >= 0 && v < 1e18)) throw RequestError(fmt::format("field '{}' must be a non-negative number", key));
        return v;
    };
    for (auto it = j.begin(); it != j.end(); ++it) {
        static constexpr std::string_view known[] = {"checkpoint", "name", "label", "suite", "suite_file", "priority", "params_b", "checkpoint_bytes", "environment"};
        if (std::find(std::begin(known), std::end(known), it.key()) == std::end(known))
            throw RequestError(fmt::format("unknown field '{}': use checkpoint, name, label, suite, suite_file, priority, params_b, checkpoint_bytes, environment",
                                           printable(it.key(), 40)));
    }
    SubmitRequest r;
    r.checkpoint_path = text("checkpoint", true);
    if (r.checkpoint_path.empty() || r.checkpoint_path[0] != '/' || r.checkpoint_path.size() > 4096)
        throw RequestError("checkpoint must be an absolute path: give the checkpoint directory on shared storage");
    for (unsigned char c : r.checkpoint_path)
        if (c < 0x20 || c == 0x7f) throw RequestError("checkpoint path holds a control character: rename the directory");
    r.name = text("name", false);
    r.checkpoint = text("label", false);
    if (r.name.empty()) r.name = parent_component(r.checkpoint_path);
    if (r.checkpoint.empty()) r.checkpoint = last_component(r.checkpoint_path);
    if (!valid_name(r.name)) throw RequestError(fmt::format("run name '{}' is not usable: pass --name with letters, digits, '.', '_', '-'", printable(r.name, 64)));
    if (!valid_name(r.checkpoint)) throw RequestError(fmt::format("checkpoint label '{}' is not usable: rename the directory or pass --label", printable(r.checkpoint, 64)));
    r.suite_file = text("suite_file", false);
    if (r.suite_file.empty()) r.suite_file = "suite";
    if (r.suite_file.size() > 4096) throw RequestError("suite_file is longer than 4096 bytes");
    const std::string suite = text("suite", true);
    if (suite.size() > (1 << 20)) throw RequestError("suite is larger than 1 MiB: split it");
    const double priority = number("priority");
    if (priority > 1000) throw RequestError("priority must be between 0 and 1000");
    r.priority = static_cast<int>(priority);
    r.params_b = number("params_b");
    r.checkpoint_bytes = number("checkpoint_bytes");
    if (r.params_b == 0) r.params_b = r.checkpoint_bytes > 0 ? r.checkpoint_bytes / 2e9 : 7;
    if (r.params_b < 0.001) r.params_b = 0.001;
    if (r.checkpoint_bytes == 0) r.checkpoint_bytes = r.params_b * 2e9;
    if (auto env = j.find("environment"); env != j.end() && !env->is_null()) {
        if (!env->is_array() || env->size() > kMaxEnvironmentVars)
            throw RequestError(fmt::format("field 'environment' must be an array of at most {} \"NAME=value\" strings", kMaxEnvironmentVars));
        for (const auto& e : *env) {
            if (!e.is_string()) throw RequestError("field 'environment' must hold only \"NAME=value\" strings");
            const std::string& entry = e.get_ref<const std::string&>();
            if (entry.size() > kMaxEnvironmentBytes) throw RequestError(fmt::format("an environment entry is larger than {} bytes", kMaxEnvironmentBytes));
            const auto eq = entry.find('=');
            if (eq == std::string::npos || eq == 0) throw RequestError(fmt::format("environment entry '{}' is not NAME=value", printable(entry, 40)));
            // Checked here too: a client may send what evalsched submit never would. A loader
            // variable is kept so that environment_problem refuses the request, naming it.
            const std::string_view name = std::string_view(entry).substr(0, eq);
            if (carried_variable(name) || loader_variable(name)) r.environment.push_back(entry);
        }
        if (const std::string why = environment_problem(r.environment); !why.empty()) throw RequestError(printable(why, 300));
    }
    r.suite = parse_suite(suite, r.suite_file);
    r.suite_text = suite;
    if (r.suite.datasets.empty()) throw SuiteError(r.suite_file, 0, "the suite has no [[dataset]]: add at least one");
    return r;
}

}  // namespace acme::evalsched
