// The tree's includes against ARCHITECTURE.md: its ```arrows block says which room may include
// which, its ```exceptions block lists the wrong-way includes still to move. An include the
// arrows do not allow fails this test, and so does an exception that no longer happens (the
// list only shrinks). The rules are read from the page itself, so the page cannot drift.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

struct Arrow {
    std::string room;                 // "common/util", "common/*" or "spank/."
    std::vector<std::string> targets; // the rooms its files may include besides their own
};

std::string read_text(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The lines of the first ```NAME fenced block.
std::vector<std::string> fenced_block(const std::string& page, const std::string& name) {
    std::vector<std::string> lines;
    std::istringstream in(page);
    std::string line;
    bool inside = false;
    while (std::getline(in, line)) {
        if (!inside) {
            inside = line == "```" + name;
            continue;
        }
        if (line.rfind("```", 0) == 0) break;
        if (line.find_first_not_of(" \t") != std::string::npos) lines.push_back(line);
    }
    return lines;
}

std::vector<std::string> words(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

std::vector<Arrow> parse_arrows(const std::string& page) {
    std::vector<Arrow> arrows;
    for (const auto& line : fenced_block(page, "arrows")) {
        const auto at = line.find("->");
        REQUIRE_MESSAGE(at != std::string::npos, "an arrows line without '->': " << line);
        const auto room = words(line.substr(0, at));
        REQUIRE_MESSAGE(room.size() == 1, "an arrows line names one room: " << line);
        arrows.push_back({room[0], words(line.substr(at + 2))});
    }
    return arrows;
}

std::set<std::pair<std::string, std::string>> parse_exceptions(const std::string& page) {
    std::set<std::pair<std::string, std::string>> out;
    for (const auto& line : fenced_block(page, "exceptions")) {
        const auto at = line.find("->");
        REQUIRE_MESSAGE(at != std::string::npos, "an exceptions line without '->': " << line);
        const auto from = words(line.substr(0, at)), to = words(line.substr(at + 2));
        REQUIRE_MESSAGE((from.size() == 1 && to.size() == 1), "an exceptions line names one file each side: " << line);
        out.emplace(from[0], to[0]);
    }
    return out;
}

// The room a path belongs to under one pattern, or "" when the pattern does not cover it:
// "X" covers everything under X; "X/*" covers X's subfolders, one room each (X/sub);
// "X/." covers the files directly in X.
std::string room_under(const std::string& pattern, const std::string& path) {
    auto ends = [&](const char* tail) { return pattern.size() > 2 && pattern.compare(pattern.size() - 2, 2, tail) == 0; };
    if (ends("/*") || ends("/.")) {
        const std::string base = pattern.substr(0, pattern.size() - 1); // "X/"
        if (path.rfind(base, 0) != 0) return "";
        const auto slash = path.find('/', base.size());
        if (ends("/.")) return slash == std::string::npos ? pattern : "";
        return slash == std::string::npos ? "" : path.substr(0, slash);
    }
    return path.rfind(pattern + "/", 0) == 0 ? pattern : "";
}

// First matching line decides a file's room.
const Arrow* arrow_for(const std::vector<Arrow>& arrows, const std::string& path, std::string& room) {
    for (const auto& arrow : arrows) {
        room = room_under(arrow.room, path);
        if (!room.empty()) return &arrow;
    }
    return nullptr;
}

using Includes = std::map<std::string, std::vector<std::string>>; // file -> the tree's paths it includes

std::vector<std::string> violations(const std::vector<Arrow>& arrows, const std::set<std::pair<std::string, std::string>>& exceptions,
                                    const Includes& includes) {
    std::vector<std::string> out;
    std::set<std::pair<std::string, std::string>> used;
    for (const auto& [file, targets] : includes) {
        std::string room;
        const Arrow* arrow = arrow_for(arrows, file, room);
        if (!arrow) {
            out.push_back(file + ": in no room of ARCHITECTURE.md's arrows");
            continue;
        }
        for (const auto& target : targets) {
            std::string target_room;
            arrow_for(arrows, target, target_room);
            bool ok = target_room == room;
            for (const auto& allowed : arrow->targets) ok = ok || !room_under(allowed, target).empty();
            if (ok) continue;
            if (exceptions.count({file, target})) {
                used.emplace(file, target);
                continue;
            }
            out.push_back(file + " includes " + target + ": " + room + " may not include " + (target_room.empty() ? target : target_room));
        }
    }
    for (const auto& exception : exceptions)
        if (!used.count(exception)) out.push_back("exception " + exception.first + " -> " + exception.second + " no longer happens: take it out of ARCHITECTURE.md");
    return out;
}

const std::vector<std::string> kTopFolders = {"common", "spank", "evalsched", "acct", "tools", "tests"};
const std::vector<std::string> kSourceFolders = {"common", "spank", "evalsched", "acct", "tools"};

Includes tree_includes(const std::filesystem::path& top) {
    static const std::regex include_line(R"(^\s*#\s*include\s*"([^"]+)\")");
    static const std::set<std::string> extensions = {".cpp", ".hpp", ".h", ".c", ".cu"};
    Includes out;
    for (const auto& folder : kSourceFolders) {
        for (const auto& entry : std::filesystem::recursive_directory_iterator(top / folder)) {
            if (!entry.is_regular_file() || !extensions.count(entry.path().extension().string())) continue;
            const std::string file = std::filesystem::relative(entry.path(), top).generic_string();
            auto& targets = out[file];
            std::ifstream in(entry.path());
            std::smatch m;
            for (std::string line; std::getline(in, line);) {
                if (!std::regex_search(line, m, include_line)) continue;
                const std::string target = m[1];
                const std::string first = target.substr(0, target.find('/'));
                // Only paths from the top of the tree are arrows; "x.hpp" beside the file is its own room.
                if (target.find('/') != std::string::npos && std::find(kTopFolders.begin(), kTopFolders.end(), first) != kTopFolders.end())
                    targets.push_back(target);
            }
        }
    }
    return out;
}

} // namespace

TEST_CASE("the tree's includes follow ARCHITECTURE.md") {
    const std::filesystem::path top = ACME_SRCDIR;
    const std::string page = read_text(top / "ARCHITECTURE.md");
    const auto arrows = parse_arrows(page);
    REQUIRE(arrows.size() >= 5);
    const auto includes = tree_includes(top);
    REQUIRE(includes.size() > 100);
    const auto found = violations(arrows, parse_exceptions(page), includes);
    for (const auto& v : found) MESSAGE(v);
    CHECK(found.empty());
}

TEST_CASE("ARCHITECTURE.md's arrows catch a reversed arrow, a sideways include and a stale exception") {
    const auto arrows = parse_arrows(read_text(std::filesystem::path(ACME_SRCDIR) / "ARCHITECTURE.md"));
    {
        const Includes made_up = {
            {"common/util/x.cpp", {"evalsched/daemon/y.hpp", "common/util/z.hpp"}},
            {"acct/gpuacct/a.cpp", {"acct/faultdiag/b.hpp", "common/store/spool.hpp", "acct/gpuacct/core/c.hpp"}},
            {"evalsched/cli/main.cpp", {"evalsched/core/suite.hpp", "evalsched/daemon/config.hpp"}},
            {"evalsched/store/s.cpp", {"common/store/database.hpp", "evalsched/core/priors.hpp", "evalsched/daemon/rows.hpp"}},
            {"spank/gputrace/p.cpp", {"spank/spank_abi.hpp", "spank/faultguard/q.hpp"}},
        };
        const auto caught = violations(arrows, {{"tools/t/main.cpp", "tests/bench/x.hpp"}}, made_up);
        const std::vector<std::string> expected = {
            "acct/gpuacct/a.cpp includes acct/faultdiag/b.hpp: acct/gpuacct may not include acct/faultdiag",
            "common/util/x.cpp includes evalsched/daemon/y.hpp: common/util may not include evalsched/daemon",
            "evalsched/cli/main.cpp includes evalsched/daemon/config.hpp: evalsched/cli may not include evalsched/daemon",
            "evalsched/store/s.cpp includes evalsched/core/priors.hpp: evalsched/store may not include evalsched/core",
            "evalsched/store/s.cpp includes evalsched/daemon/rows.hpp: evalsched/store may not include evalsched/daemon",
            "spank/gputrace/p.cpp includes spank/faultguard/q.hpp: spank/gputrace may not include spank/faultguard",
            "exception tools/t/main.cpp -> tests/bench/x.hpp no longer happens: take it out of ARCHITECTURE.md",
        };
        CHECK(caught == expected);
    }
}

// Each store's statements live in its store folder (common/store: the node spools; evalsched/
// store: evalschedd's file), so a schema change touches one folder: a statement's text anywhere
// else in the tree (a quoted SELECT, INSERT, UPDATE ... SET, DELETE FROM, CREATE, or a R"sql(
// block) fails here.
TEST_CASE("SQL lives only in the store folders") {
    static const std::regex statement(
        R"re("[^"]*\b(SELECT|INSERT INTO|INSERT OR|UPDATE [a-z_]+ SET|DELETE FROM|CREATE (TABLE|INDEX|TRIGGER))\b|R"sql\()re");
    const std::filesystem::path top = ACME_SRCDIR;
    std::vector<std::string> found;
    for (const auto& folder : kSourceFolders) {
        for (const auto& entry : std::filesystem::recursive_directory_iterator(top / folder)) {
            const std::string file = std::filesystem::relative(entry.path(), top).generic_string();
            const auto ext = entry.path().extension();
            if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp")) continue;
            if (file.rfind("common/store/", 0) == 0 || file.rfind("evalsched/store/", 0) == 0) continue;
            std::ifstream in(entry.path());
            int n = 0;
            for (std::string line; std::getline(in, line);)
                if (++n, std::regex_search(line, statement)) found.push_back(file + ":" + std::to_string(n) + ": " + line);
        }
    }
    for (const auto& f : found) MESSAGE(f);
    CHECK(found.empty());
}
