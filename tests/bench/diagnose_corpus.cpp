#include "tests/bench/diagnose_corpus.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <toml++/toml.h>

namespace fs = std::filesystem;

namespace acme::diagnose::corpus {
namespace {

std::string slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The sidecar: what the epilog would know besides the log, and where the case came from.
void read_meta(const fs::path& path, Case& c) {
    toml::table meta;
    try {
        meta = toml::parse_file(path.string());
    } catch (const toml::parse_error& e) {
        throw std::runtime_error(fmt::format("{}: not valid TOML ({})", path.string(), e.description()));
    }
    JobEnd& job = c.job;
    if (auto code = meta["exit_code"].value<std::string>()) job.job_exit = parse_exit_code2(*code);
    job.oom_kill = meta["oom_kill"].value_or(false);
    job.time_limit = meta["time_limit"].value_or(false);
    job.cancelled = meta["cancelled"].value_or(false);
    job.stalled = meta["stalled"].value_or(false);
    job.stall_named = meta["stall_named"].value_or(false);
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
    c.source = meta["source"].value_or(std::string());
    c.why = meta["why"].value_or(std::string());
}

std::size_t index_of(Category category) {
    return static_cast<std::size_t>(std::find(kCategories.begin(), kCategories.end(), category) - kCategories.begin());
}

}  // namespace

std::vector<Case> load(const fs::path& dir) {
    std::vector<fs::path> logs;
    for (const auto& entry : fs::recursive_directory_iterator(dir))
        if (entry.path().extension() == ".log") logs.push_back(entry.path());
    std::sort(logs.begin(), logs.end());
    std::vector<Case> cases;
    for (const auto& path : logs) {
        Case c;
        c.log = path;
        c.expected = path.parent_path().filename().string();
        if (!find_reason(c.expected))
            throw std::runtime_error(fmt::format("{}: directory {} is not a reason", path.string(), c.expected));
        c.text = slurp(path);
        if (auto meta = fs::path(path).replace_extension(".toml"); fs::exists(meta)) read_meta(meta, c);
        cases.push_back(std::move(c));
    }
    return cases;
}

double Score::infrastructure_precision() const {
    std::size_t i = index_of(Category::infrastructure);
    int called = 0;
    for (const auto& row : confusion) called += row[i];
    return called ? double(confusion[i][i]) / called : 0;
}

double Score::infrastructure_recall() const {
    std::size_t i = index_of(Category::infrastructure);
    int actual = 0;
    for (int n : confusion[i]) actual += n;
    return actual ? double(confusion[i][i]) / actual : 0;
}

Score score(const Engine& engine, const std::vector<Case>& cases) {
    Score s;
    for (const Case& c : cases) {
        const ReasonInfo& expected = *find_reason(c.expected);
        JobEnd job = c.job;
        job.log = c.text;
        Diagnosis d = engine.diagnose(job);
        bool reason_ok = d.reason == c.expected;
        bool category_ok = d.category == expected.category;
        ++s.total;
        s.reason_right += reason_ok;
        s.category_right += category_ok;
        ++s.confusion[index_of(expected.category)][index_of(d.category)];
        auto& [right, total] = s.by_reason[c.expected];
        ++total;
        right += reason_ok;
        std::string where = fmt::format("{}/{}", c.expected, c.log.filename().string());
        std::string evidence = d.evidence.empty() ? std::string("no evidence") : d.evidence.front().text;
        if (!reason_ok) s.misses.push_back(fmt::format("  {}: got {} ({})", where, d.reason, evidence));
        if (d.category == Category::infrastructure && expected.category != Category::infrastructure)
            s.false_infrastructure.push_back(fmt::format("  {}: called {} ({})", where, d.reason, evidence));
    }
    return s;
}

std::string report(const Score& s) {
    std::string out = fmt::format("diagnosis over {} cases: category {:.1f} %, reason {:.1f} %\n", s.total,
                                  100 * s.category_accuracy(), 100 * s.reason_accuracy());
    out += fmt::format("infrastructure precision {:.3f}, recall {:.3f}\n", s.infrastructure_precision(),
                       s.infrastructure_recall());
    out += fmt::format("  {:<16}", "expected \\ got");
    for (Category c : kCategories) out += fmt::format(" {:>14}", to_string(c));
    out += "\n";
    for (std::size_t row = 0; row < kCategories.size(); ++row) {
        out += fmt::format("  {:<16}", to_string(kCategories[row]));
        for (int n : s.confusion[row]) out += fmt::format(" {:>14}", n);
        out += "\n";
    }
    for (const auto& [name, t] : s.by_reason)
        out += fmt::format("  reason {:<24} {:3}/{:<3} {:5.1f} %\n", name, t.first, t.second,
                           t.second ? 100.0 * t.first / t.second : 0.0);
    if (!s.false_infrastructure.empty()) out += "called infrastructure but is not:\n";
    for (const auto& line : s.false_infrastructure) out += line + "\n";
    if (!s.misses.empty()) out += "misses:\n";
    for (const auto& line : s.misses) out += line + "\n";
    return out;
}

}  // namespace acme::diagnose::corpus
