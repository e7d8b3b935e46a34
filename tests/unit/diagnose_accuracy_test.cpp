// The shipped rules against the labelled corpus (tests/data/diagnosis): prints accuracy per
// category and per reason, lists every miss, and fails below 95 % category / 90 % reason.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "common/diagnose/engine.hpp"

namespace fs = std::filesystem;
using namespace acme::diagnose;

namespace {

std::string source_dir() {
    const char* srcdir = std::getenv("srcdir");  // set by automake's test harness
    return srcdir && *srcdir ? srcdir : ".";
}

std::string slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The case's sidecar: what the epilog would know besides the log.
void read_meta(const fs::path& path, JobEnd& job) {
    auto meta = toml::parse_file(path.string());
    if (auto code = meta["exit_code"].value<std::string>()) job.job_exit = parse_exit_code2(*code);
    job.oom_kill = meta["oom_kill"].value_or(false);
    job.time_limit = meta["time_limit"].value_or(false);
    job.cancelled = meta["cancelled"].value_or(false);
    job.node_failure = meta["node_failure"].value_or(false);
    if (auto* gpus = meta["job_gpus"].as_array())
        for (auto& gpu : *gpus) job.job_gpus.push_back(static_cast<int>(gpu.value_or(0)));
    if (auto* events = meta["gpu_event"].as_array())
        for (auto& node : *events) {
            auto& event = *node.as_table();
            GpuEvent e;
            e.gpu = static_cast<int>(event["gpu"].value_or(0));
            e.kind = event["kind"].value_or(std::string());
            e.code = event["code"].value<std::int64_t>();
            e.detail = event["detail"].value_or(std::string());
            job.gpu_events.push_back(std::move(e));
        }
}

struct Tally {
    int right = 0, total = 0;
    double percent() const { return total ? 100.0 * right / total : 0.0; }
};

}  // namespace

TEST_CASE("the shipped rules name the cause of >= 90 % of the labelled corpus and the category of >= 95 %") {
    fs::path corpus = fs::path(source_dir()) / "tests/data/diagnosis";
    Engine engine = Engine::from_dir(fs::path(source_dir()) / "rules");

    std::map<std::string, Tally> by_reason, by_category;
    Tally reason_total, category_total;
    std::vector<std::string> misses;
    std::vector<fs::path> cases;
    for (const auto& entry : fs::recursive_directory_iterator(corpus))
        if (entry.path().extension() == ".log") cases.push_back(entry.path());
    std::sort(cases.begin(), cases.end());
    REQUIRE(cases.size() >= 3 * (reasons().size() - 1));

    for (const auto& path : cases) {
        std::string expected = path.parent_path().filename().string();
        const ReasonInfo* info = find_reason(expected);
        REQUIRE_MESSAGE(info, "corpus directory " << expected << " is not a reason");
        std::string log = slurp(path);
        JobEnd job;
        job.log = log;
        if (auto meta = fs::path(path).replace_extension(".toml"); fs::exists(meta)) read_meta(meta, job);
        Diagnosis d = engine.diagnose(job);

        bool reason_ok = d.reason == expected;
        bool category_ok = d.category == info->category;
        for (auto* t : {&by_reason[expected], &reason_total}) {
            t->total++;
            t->right += reason_ok;
        }
        for (auto* t : {&by_category[std::string(to_string(info->category))], &category_total}) {
            t->total++;
            t->right += category_ok;
        }
        if (!reason_ok)
            misses.push_back(fmt::format("  {}/{}: expected {}, got {} ({})", expected, path.filename().string(),
                                         expected, d.reason,
                                         d.evidence.empty() ? std::string("no evidence") : d.evidence.front().text));
    }

    std::string report = fmt::format("diagnosis accuracy over {} cases: category {:.1f} %, reason {:.1f} %\n",
                                     reason_total.total, category_total.percent(), reason_total.percent());
    for (const auto& [name, t] : by_category)
        report += fmt::format("  category {:<16} {:3}/{:<3} {:5.1f} %\n", name, t.right, t.total, t.percent());
    for (const auto& [name, t] : by_reason)
        report += fmt::format("  reason   {:<24} {:2}/{:<2} {:5.1f} %\n", name, t.right, t.total, t.percent());
    for (const auto& miss : misses) report += miss + "\n";
    fmt::print("{}", report);

    CHECK(category_total.percent() >= 95.0);
    CHECK(reason_total.percent() >= 90.0);
}
