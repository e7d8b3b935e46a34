#include "evalsched/daemon/follow_request.hpp"

#include <cmath>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace acme::evalsched {

using nlohmann::json;

namespace {

std::string last_name(std::string_view path) {
    while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
    const auto slash = path.rfind('/');
    return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace

FollowRequest parse_follow(std::string_view body) {
    json j = json::parse(body, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw RequestError("request body is not a JSON object: send {\"dir\": ..., \"suite\": ...}");
    static constexpr std::string_view known[] = {"dir", "name", "suite", "suite_file", "priority", "params_b", "every", "keep_up", "environment"};
    for (const auto& [key, v] : j.items()) {
        bool ok = false;
        for (auto k : known) ok = ok || key == k;
        if (!ok)
            throw RequestError(fmt::format("unknown field '{}': use dir, name, suite, suite_file, priority, params_b, every, keep_up, environment",
                                           printable(key, 40)));
    }
    FollowRequest r;
    const auto dir = j.find("dir");
    if (dir == j.end() || !dir->is_string()) throw RequestError("field 'dir' is missing: send the checkpoint directory as a string");
    r.dir = dir->get<std::string>();
    if (r.dir.empty() || r.dir[0] != '/' || r.dir.size() > 4096) throw RequestError("field 'dir' must be an absolute path of at most 4096 bytes");
    for (unsigned char c : r.dir)
        if (c < 0x20 || c == 0x7f) throw RequestError("dir holds a control character: rename the directory");
    while (r.dir.size() > 1 && r.dir.back() == '/') r.dir.pop_back();
    if (auto e = j.find("every"); e != j.end() && !e->is_null()) {
        if (!e->is_number_integer() || e->get<long long>() < 0 || e->get<long long>() > 1000000000000LL)
            throw RequestError("field 'every' must be a whole number of steps, 0 to 10^12");
        r.options.every = e->get<long long>();
    }
    if (auto k = j.find("keep_up"); k != j.end() && !k->is_null()) {
        if (!k->is_boolean()) throw RequestError("field 'keep_up' must be true or false");
        r.options.keep_up = k->get<bool>();
    }
    // Everything else is what a submission carries: checked by the same code.
    json submit = j;
    submit.erase("dir");
    submit.erase("every");
    submit.erase("keep_up");
    submit["checkpoint"] = r.dir;
    if (!submit.contains("name") || submit["name"].is_null()) submit["name"] = last_name(r.dir);
    submit["label"] = "follow";
    r.submit = parse_submit(submit.dump());
    r.suite_text = j["suite"].get<std::string>();
    return r;
}

std::vector<ScannedCheckpoint> parse_scan_output(std::string_view text, const std::string& dir) {
    std::vector<ScannedCheckpoint> out;
    std::set<std::string> listed;
    const std::string prefix = dir + "/";
    while (!text.empty()) {
        const auto nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
        std::vector<std::string> f;
        std::size_t at = 0;
        for (int i = 0; i < 4; ++i) {
            const auto tab = line.find('\t', at);
            if (tab == std::string_view::npos) break;
            f.emplace_back(line.substr(at, tab - at));
            at = tab + 1;
        }
        if (f.size() != 4 || at >= line.size()) continue;
        const std::string path(line.substr(at));
        if (!path.starts_with(prefix) || path.size() == prefix.size() || path.find('/', prefix.size()) != std::string::npos) continue;
        try {
            ScannedCheckpoint s;
            std::size_t used = 0;
            s.checkpoint.step = std::stoll(f[0], &used);
            if (used != f[0].size() || s.checkpoint.step < 0) continue;
            s.checkpoint.path = path;
            s.weight_bytes = std::stod(f[2]);
            s.parameters = f[3] == "-" ? 0 : std::stod(f[3]);
            if (!std::isfinite(s.weight_bytes) || s.weight_bytes < 0 || !std::isfinite(s.parameters) || s.parameters < 0) continue;
            if (listed.insert(s.checkpoint.path).second) out.push_back(std::move(s));
        } catch (const std::exception&) {
        }
    }
    return out;
}

}  // namespace acme::evalsched
