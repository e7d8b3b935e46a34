#include "common/diagnose/corpus.hpp"

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
    c.batch = meta["batch"].value_or(std::string());
    c.known_miss = meta["known_miss"].value_or(std::string());
}

std::size_t index_of(Category category) {
    return static_cast<std::size_t>(std::find(kCategories.begin(), kCategories.end(), category) - kCategories.begin());
}

}  // namespace

void tally(Score& s, const std::string& where, const ReasonInfo& expected, const ReasonInfo& got,
           const std::string& evidence, bool known_miss) {
    bool reason_ok = got.name == expected.name;
    bool category_ok = got.category == expected.category;
    ++s.total;
    s.reason_right += reason_ok;
    s.category_right += category_ok;
    ++s.confusion[index_of(expected.category)][index_of(got.category)];
    auto& [right, total] = s.by_reason[std::string(expected.name)];
    ++total;
    right += reason_ok;
    if (!reason_ok) s.misses.push_back(fmt::format("  {}: got {} ({})", where, got.name, evidence));
    if (known_miss && expected.category == Category::infrastructure && got.category != Category::infrastructure)
        ++s.known_missed_infrastructure;
    if (got.category == Category::infrastructure && expected.category != Category::infrastructure)
        (known_miss ? s.known_false_infrastructure : s.false_infrastructure)
            .push_back(fmt::format("  {}: called {} ({})", where, got.name, evidence));
}

namespace {

Diagnosis diagnose_case(const Engine& engine, const Case& c) {
    JobEnd job = c.job;
    job.log = c.text;
    return engine.diagnose(job);
}

std::string where_of(const Case& c) { return fmt::format("{}/{}", c.expected, c.log.filename().string()); }

// TSV cells are one line and tab-free: evidence is a log line, which may hold either.
std::string cell(std::string text) {
    std::replace_if(text.begin(), text.end(), [](char ch) { return ch == '\t' || ch == '\n' || ch == '\r'; }, ' ');
    return text;
}

std::vector<std::string> split_tabs(const std::string& line) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (std::size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1)
        out.push_back(line.substr(start, tab - start));
    out.push_back(line.substr(start));
    return out;
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

int Score::infrastructure_cases() const {
    int actual = 0;
    for (int n : confusion[index_of(Category::infrastructure)]) actual += n;
    return actual;
}

double Score::infrastructure_recall() const {
    const int actual = infrastructure_cases();
    return actual ? double(confusion[index_of(Category::infrastructure)][index_of(Category::infrastructure)]) / actual : 0;
}

double Score::infrastructure_recall_telling() const {
    const int telling = infrastructure_cases() - known_missed_infrastructure;
    return telling > 0 ? double(confusion[index_of(Category::infrastructure)][index_of(Category::infrastructure)]) / telling
                       : 0;
}

Score score(const Engine& engine, const std::vector<Case>& cases) {
    Score s;
    for (const Case& c : cases) {
        Diagnosis d = diagnose_case(engine, c);
        const ReasonInfo* got = find_reason(d.reason);
        std::string evidence = d.evidence.empty() ? std::string("no evidence") : d.evidence.front().text;
        tally(s, where_of(c), *find_reason(c.expected), got ? *got : unknown_reason(), evidence, !c.known_miss.empty());
    }
    return s;
}

std::string source_group(const Case& c) {
    std::string_view s = c.source;
    for (std::string_view scheme : {"https://", "http://"})
        if (s.starts_with(scheme)) s.remove_prefix(scheme.size());
    if (s.empty()) return "case:" + c.log.string();
    std::size_t host = s.find('/');
    if (s.starts_with("github.com/")) {
        std::size_t owner = s.find('/', host + 1);
        std::size_t name = owner == std::string_view::npos ? owner : s.find('/', owner + 1);
        return std::string(s.substr(host + 1, name == std::string_view::npos ? s.size() : name - host - 1));
    }
    return std::string(s.substr(0, host));
}

std::vector<Case> of_batch(const std::vector<Case>& cases, const std::string& batch) {
    std::vector<Case> out;
    for (const Case& c : cases)
        if (c.batch == batch) out.push_back(c);
    return out;
}

std::vector<std::string> batches(const std::vector<Case>& cases) {
    std::vector<std::string> out;
    for (const Case& c : cases)
        if (!c.batch.empty() && std::find(out.begin(), out.end(), c.batch) == out.end()) out.push_back(c.batch);
    std::sort(out.begin(), out.end());
    return out;
}

std::string first_sight_tsv(const Engine& engine, const std::vector<Case>& cases, const std::string& batch,
                            const std::string& commit) {
    std::vector<Case> mine = of_batch(cases, batch);
    std::string out = fmt::format("# first-sight record of batch {}: the rules at commit {}, before any rule was written for it\n",
                                  batch, commit);
    out += fmt::format("# batch\t{}\n# commit\t{}\n", batch, commit);
    out += "case\texpected\tgot\texpected_category\tgot_category\trule\tevidence\n";
    for (const Case& c : mine) {
        Diagnosis d = diagnose_case(engine, c);
        const ReasonInfo& expected = *find_reason(c.expected);
        std::string evidence = d.evidence.empty() ? std::string("no evidence") : d.evidence.front().text;
        out += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\n", where_of(c), c.expected, d.reason, to_string(expected.category),
                           to_string(d.category), d.rule.empty() ? "-" : d.rule, cell(evidence));
    }
    return out;
}

FirstSight parse_first_sight(std::string_view text, std::string_view name) {
    FirstSight record;
    bool header = false;
    int number = 0;
    for (std::size_t start = 0; start < text.size();) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        std::string line(text.substr(start, end - start));
        start = end + 1;
        ++number;
        if (line.empty()) continue;
        auto cells = split_tabs(line);
        if (line.starts_with("# batch\t")) record.batch = cells.at(1);
        if (line.starts_with("# commit\t")) record.commit = cells.at(1);
        if (line.starts_with("#")) continue;
        if (!header) {
            header = true;
            continue;
        }
        const ReasonInfo* expected = cells.size() >= 7 ? find_reason(cells[1]) : nullptr;
        const ReasonInfo* got = cells.size() >= 7 ? find_reason(cells[2]) : nullptr;
        if (!expected || !got)
            throw std::runtime_error(fmt::format("{}:{}: not a row of case, expected and got reasons", name, number));
        tally(record.score, cells[0], *expected, *got, cells[6]);
        record.rows.push_back({cells[0], cells[1], cells[2], cells[5], cells[6]});
    }
    if (record.batch.empty() || record.commit.empty())
        throw std::runtime_error(fmt::format("{}: no '# batch' or '# commit' line", name));
    return record;
}

FirstSight read_first_sight(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(fmt::format("{}: cannot read", path.string()));
    return parse_first_sight(slurp(path), path.string());
}

std::string report(const Score& s) {
    std::string out = fmt::format("diagnosis over {} cases: category {:.1f} %, reason {:.1f} %\n", s.total,
                                  100 * s.category_accuracy(), 100 * s.reason_accuracy());
    out += fmt::format("infrastructure precision {:.3f}, recall {:.3f} ({:.3f} of the {} cases the log can tell: {} known "
                       "misses left out)\n",
                       s.infrastructure_precision(), s.infrastructure_recall(), s.infrastructure_recall_telling(),
                       s.infrastructure_cases() - s.known_missed_infrastructure, s.known_missed_infrastructure);
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
    if (!s.known_false_infrastructure.empty()) out += "called infrastructure but is not (known misses: the log alone cannot tell):\n";
    for (const auto& line : s.known_false_infrastructure) out += line + "\n";
    if (!s.misses.empty()) out += "misses:\n";
    for (const auto& line : s.misses) out += line + "\n";
    return out;
}

}  // namespace acme::diagnose::corpus
