#include "common/recovery/checkpoints.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "common/util/parse.hpp"

namespace acme::recovery {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void bad(const std::string& source, const toml::source_region& where, const std::string& what) {
    throw std::runtime_error(fmt::format("{}:{}: {}", source, where.begin.line, what));
}

std::string string_field(const toml::table& t, const char* key, const std::string& source) {
    const auto* v = t.get(key);
    if (!v || !v->is_string()) bad(source, t.source(), fmt::format("missing string \"{}\"", key));
    return v->as_string()->get();
}

// The last run of digits in a name: step-12000 -> 12000; none -> -1.
long long step_of(const std::string& name) {
    long long value = -1;
    std::size_t i = name.size();
    while (i > 0 && !std::isdigit(static_cast<unsigned char>(name[i - 1]))) --i;
    std::size_t j = i;
    while (j > 0 && std::isdigit(static_cast<unsigned char>(name[j - 1]))) --j;
    if (j < i && i - j < 18) value = std::stoll(name.substr(j, i - j));
    return value;
}

std::optional<std::string> pointer_target(const fs::path& dir, const PointerRule& rule) {
    std::ifstream in(dir / rule.file);
    if (!in) return std::nullopt;
    std::string content;
    std::getline(in, content);
    while (!content.empty() && std::isspace(static_cast<unsigned char>(content.back()))) content.pop_back();
    while (!content.empty() && std::isspace(static_cast<unsigned char>(content.front()))) content.erase(0, 1);
    if (content.empty() || content.size() > 255 || content.find('/') != std::string::npos || content == "." || content == "..")
        return std::nullopt;
    if (rule.format.find("{:") != std::string::npos) {
        const auto n = util::parse_int(content);
        if (!n || *n < 0) return std::nullopt;
        return fmt::format(fmt::runtime(rule.format), *n);
    }
    return fmt::format(fmt::runtime(rule.format), content);
}

bool has_marker(const fs::path& candidate, const MarkerRule& rule, std::size_t& budget) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(candidate, ec)) {
        if (budget == 0) return false;
        --budget;
        const std::string name = entry.path().filename().string();
        for (const auto& glob : rule.files)
            if (fnmatch(glob.c_str(), name.c_str(), 0) == 0) return true;
    }
    return false;
}

}  // namespace

CheckpointRules parse_checkpoint_rules(const std::string& text, const std::string& source) {
    toml::table doc;
    try {
        doc = toml::parse(text, source);
    } catch (const toml::parse_error& e) {
        throw std::runtime_error(fmt::format("{}:{}: {}", source, e.source().begin.line, e.description()));
    }
    CheckpointRules rules;
    for (const auto& [key, node] : doc) {
        if (key != "marker" && key != "pointer")
            bad(source, node.source(), fmt::format("unknown section \"{}\" (want [[marker]] or [[pointer]])", key.str()));
        const auto* arr = node.as_array();
        if (!arr) bad(source, node.source(), fmt::format("\"{}\" must be an array of tables ([[{}]])", key.str(), key.str()));
        for (const auto& item : *arr) {
            const auto* t = item.as_table();
            if (!t) bad(source, item.source(), "want a table");
            if (key == "marker") {
                MarkerRule m{string_field(*t, "name", source), {}};
                const auto* files = t->get_as<toml::array>("files");
                if (!files || files->empty()) bad(source, t->source(), "[[marker]] needs files = [\"...\"]");
                for (const auto& f : *files) {
                    if (!f.is_string() || f.as_string()->get().empty() || f.as_string()->get().find('/') != std::string::npos)
                        bad(source, f.source(), "files are file-name globs without '/'");
                    m.files.push_back(f.as_string()->get());
                }
                for (const auto& [k, v] : *t)
                    if (k != "name" && k != "files") bad(source, v.source(), fmt::format("unknown key \"{}\"", k.str()));
                rules.markers.push_back(std::move(m));
            } else {
                PointerRule p{string_field(*t, "name", source), string_field(*t, "file", source),
                              string_field(*t, "format", source)};
                if (p.file.find('/') != std::string::npos) bad(source, t->source(), "file is a name, without '/'");
                if (p.format != "{}" && p.format.find("{:0") == std::string::npos && p.format.find("{}") == std::string::npos)
                    bad(source, t->source(), "format needs {} or {:0Nd}");
                try {
                    (void)fmt::format(fmt::runtime(p.format), 1);
                } catch (const fmt::format_error& e) {
                    bad(source, t->source(), fmt::format("format \"{}\": {}", p.format, e.what()));
                }
                for (const auto& [k, v] : *t)
                    if (k != "name" && k != "file" && k != "format")
                        bad(source, v.source(), fmt::format("unknown key \"{}\"", k.str()));
                rules.pointers.push_back(std::move(p));
            }
        }
    }
    return rules;
}

CheckpointRules load_checkpoint_rules(const fs::path& file) {
    std::ifstream in(file);
    if (!in) throw std::runtime_error(fmt::format("{}: cannot read the checkpoint rules", file.string()));
    std::stringstream ss;
    ss << in.rdbuf();
    return parse_checkpoint_rules(ss.str(), file.string());
}

namespace {

struct Candidate {
    fs::path path;
    long long step;
    fs::file_time_type mtime;
};

// The directories in dir that may be checkpoints, reading at most `budget` entries (what is left
// of it goes on to the marker checks). Recovery, running as the job's user, follows a linked
// checkpoint directory; the evaluation scan (follow) never does.
std::vector<Candidate> list_candidates(const fs::path& dir, std::size_t& budget, bool follow_links) {
    std::vector<Candidate> candidates;
    std::error_code ec;
    fs::directory_iterator listing(dir, ec);
    // The directory existed when the job was submitted (sbatch checks): gone or unreadable now
    // is an unmounted file system or a removed directory, never "no checkpoint yet".
    if (ec)
        throw std::runtime_error(fmt::format("cannot read {}: {}{}", dir.string(), ec.message(),
                                             ec == std::errc::no_such_file_or_directory ? " (not mounted on this node?)" : ""));
    for (const auto& entry : listing) {
        if (budget == 0) break;
        --budget;
        std::error_code e2;
        if (!(follow_links ? entry.is_directory(e2) : fs::is_directory(entry.symlink_status(e2)))) continue;
        candidates.push_back({entry.path(), step_of(entry.path().filename().string()), entry.last_write_time(e2)});
    }
    return candidates;
}

}  // namespace

std::optional<Found> newest_complete(const fs::path& dir, const CheckpointRules& rules, std::size_t max_entries) {
    std::size_t budget = max_entries;
    auto candidates = list_candidates(dir, budget, true);
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
        if (a.step != b.step) return a.step > b.step;
        return a.mtime > b.mtime;
    });
    // Pointer files name the complete checkpoint outright.
    std::vector<std::pair<std::string, std::string>> pointed;  // dir name, rule
    for (const auto& p : rules.pointers)
        if (auto target = pointer_target(dir, p)) pointed.emplace_back(*target, p.name);

    Found found;
    for (const auto& c : candidates) {
        const auto name = c.path.filename().string();
        for (const auto& [target, rule] : pointed) {
            if (target == name) {
                found.path = c.path;
                found.rule = rule;
                return found;
            }
        }
        for (const auto& m : rules.markers) {
            if (has_marker(c.path, m, budget)) {
                found.path = c.path;
                found.rule = m.name;
                return found;
            }
        }
        found.skipped.push_back(name);
    }
    return std::nullopt;
}

std::vector<Complete> all_complete(const fs::path& dir, const CheckpointRules& rules, std::size_t max_entries) {
    std::size_t budget = max_entries;
    // A link is never a checkpoint here, and neither is a directory without a step number.
    auto candidates = list_candidates(dir, budget, false);
    std::erase_if(candidates, [](const Candidate& c) { return c.step < 0; });
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
        if (a.step != b.step) return a.step < b.step;
        return a.mtime < b.mtime;
    });
    // The newest step each pointer file vouches for.
    std::vector<std::pair<long long, std::string>> pointed;  // step, rule
    for (const auto& p : rules.pointers) {
        const auto target = pointer_target(dir, p);
        if (!target) continue;
        for (const auto& c : candidates)
            if (c.path.filename().string() == *target) pointed.emplace_back(c.step, p.name);
    }
    std::vector<Complete> out;
    for (const auto& c : candidates) {
        std::string rule;
        for (const auto& [step, name] : pointed)
            if (c.step <= step) {
                rule = name;
                break;
            }
        for (std::size_t i = 0; rule.empty() && i < rules.markers.size(); ++i)
            if (has_marker(c.path, rules.markers[i], budget)) rule = rules.markers[i].name;
        if (!rule.empty()) out.push_back({c.path, c.step, rule});
    }
    return out;
}

}  // namespace acme::recovery
