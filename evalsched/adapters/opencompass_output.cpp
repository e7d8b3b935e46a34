#include "evalsched/adapters/opencompass_output.hpp"

#include <filesystem>
#include <cctype>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

namespace acme::adapters::opencompass {

using nlohmann::json;

std::map<std::string, double> parse_result(std::string_view text, const std::string& file) {
    const json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw AdapterError(fmt::format("{} is not a JSON object: OpenCompass did not finish writing it", file));
    if (auto e = j.find("error"); e != j.end())
        throw AdapterError(fmt::format("{}: OpenCompass's evaluator failed: {:.200}", file, e->is_string() ? e->get<std::string>() : e->dump()));
    std::map<std::string, double> out;
    for (auto it = j.begin(); it != j.end(); ++it)
        if (it->is_number()) out[it.key()] = it->get<double>();
    if (out.empty()) throw AdapterError(fmt::format("{} has no numeric score", file));
    return out;
}

long count_predictions(std::string_view text, const std::string& file) {
    const json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !(j.is_object() || j.is_array()))
        throw AdapterError(fmt::format("{} is not OpenCompass predictions (a JSON object keyed by sample index)", file));
    return static_cast<long>(j.size());
}

MetricKind metric_kind(std::string_view name) {
    // opencompass/openicl/icl_evaluator/icl_hf_evaluator.py (AccEvaluator, AccwithDetailsEvaluator),
    // opencompass/datasets/{gsm8k,bbh,triviaqa,natural_question,mbpp,humaneval}.py,
    // opencompass/openicl/icl_evaluator/icl_em_evaluator.py, opencompass/evaluator/math_evaluator.py,
    // opencompass/datasets/TheoremQA/main.py: each a percentage of the samples scored.
    static const std::set<std::string_view> means{"accuracy", "acc", "score", "exact_match", "em", "correct_rate", "score_acc"};
    // MBPPEvaluator.score: result = {'pass': 0, 'timeout': 0, 'failed': 0, 'wrong_answer': 0}, one per sample.
    static const std::set<std::string_view> counts{"pass", "timeout", "failed", "wrong_answer"};
    if (means.count(name) || name.ends_with("_accuracy")) return MetricKind::mean;
    // HumanEvalEvaluator: {f'humaneval_{k}': score[k] * 100}, human_eval's per-problem pass@k
    // estimates averaged over the problems.
    if (name.starts_with("humaneval_pass@") || name.starts_with("mbpp_pass@") || name.starts_with("pass@")) return MetricKind::mean;
    if (counts.count(name)) return MetricKind::count;
    return MetricKind::other;
}

namespace {
// `name = <rest>` at the start of a line (spaces around '=' optional): the rest's offset, or npos.
std::size_t top_level_value(std::string_view text, std::size_t line) {
    std::size_t i = line;
    if (i >= text.size() || !(std::isalpha(static_cast<unsigned char>(text[i])) || text[i] == '_')) return std::string_view::npos;
    while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_')) ++i;
    while (i < text.size() && text[i] == ' ') ++i;
    if (i >= text.size() || text[i] != '=' || (i + 1 < text.size() && text[i + 1] == '=')) return std::string_view::npos;
    ++i;
    while (i < text.size() && text[i] == ' ') ++i;
    return i;
}
}  // namespace

std::vector<std::string> dumped_dataset_abbrs(std::string_view text, const std::string& file) {
    // mmengine's Config.dump writes each top-level key as a `name = value` line; the datasets
    // list runs up to the next one. A scan, not std::regex: libstdc++'s recurses per character.
    std::size_t begin = std::string_view::npos, end = text.size();
    for (std::size_t line = 0; line < text.size(); line = text.find('\n', line) == std::string_view::npos ? text.size() : text.find('\n', line) + 1) {
        const std::size_t value = top_level_value(text, line);
        if (value == std::string_view::npos) continue;
        if (begin != std::string_view::npos) {
            end = line;
            break;
        }
        if (text.substr(line).starts_with("datasets") && !(std::isalnum(static_cast<unsigned char>(text[line + 8])) || text[line + 8] == '_') &&
            value < text.size() && text[value] == '[')
            begin = value;
    }
    if (begin == std::string_view::npos)
        throw AdapterError(fmt::format("{} holds no datasets list: OpenCompass did not resolve the config; see its output above", file));
    const std::string_view list = text.substr(begin, end - begin);
    std::vector<std::string> out;
    for (std::size_t at = list.find("abbr"); at != std::string_view::npos; at = list.find("abbr", at + 4)) {
        if (at > 0 && (std::isalnum(static_cast<unsigned char>(list[at - 1])) || list[at - 1] == '_')) continue;
        std::size_t i = at + 4;
        while (i < list.size() && list[i] == ' ') ++i;
        if (i >= list.size() || list[i] != '=') continue;
        ++i;
        while (i < list.size() && list[i] == ' ') ++i;
        if (i >= list.size() || (list[i] != '\'' && list[i] != '"')) continue;
        const std::size_t close = list.find(list[i], i + 1);
        if (close == std::string_view::npos) break;
        out.emplace_back(list.substr(i + 1, close - i - 1));
    }
    if (out.empty()) throw AdapterError(fmt::format("{}: its datasets list names no abbr: OpenCompass did not resolve the config", file));
    return out;
}

std::string part_record_json(const PartRecord& r) {
    return json{{"dataset", r.dataset}, {"shard", r.shard}, {"num_shards", r.num_shards}, {"begin", r.begin}, {"end", r.end}, {"samples", r.samples}}.dump() + "\n";
}

PartRecord parse_part_record(std::string_view text, const std::string& file) {
    const json j = json::parse(text, nullptr, false);
    const auto bad = [&] { return AdapterError(fmt::format("{} is not the adapter's record of the trial: rerun the trial", file)); };
    if (j.is_discarded() || !j.is_object()) throw bad();
    // find(), never const operator[]: on a missing key that is undefined behaviour.
    const auto integer = [&](const char* key) {
        const auto it = j.find(key);
        if (it == j.end() || !it->is_number_integer()) throw bad();
        return it->get<long>();
    };
    PartRecord r;
    const auto d = j.find("dataset");
    if (d == j.end() || !d->is_string()) throw bad();
    r.dataset = d->get<std::string>();
    r.shard = static_cast<int>(integer("shard")), r.num_shards = static_cast<int>(integer("num_shards"));
    r.begin = integer("begin"), r.end = integer("end"), r.samples = integer("samples");
    if (r.begin < 0 || r.end < r.begin || r.samples < 0 || r.num_shards < 1 || r.shard < 0 || r.shard >= r.num_shards) throw bad();
    return r;
}

void check_complete(const std::string& dataset, const std::string& run_dir, const std::vector<Found>& found, long samples, bool results) {
    std::vector<std::string> missing;
    long got = 0;
    for (const auto& f : found) {
        if (f.predictions < 0)
            missing.push_back(f.abbr + " (no predictions: see logs/infer/)");
        else if (results && !f.results)
            missing.push_back(f.abbr + " (no results: see logs/eval/)");
        got += std::max(f.predictions, 0L);
    }
    if (!missing.empty())
        throw AdapterError(fmt::format("{}: OpenCompass finished {} of {} subsets under {}; missing {}: a score over the rest would be partial; rerun the trial",
                                       dataset, found.size() - missing.size(), found.size(), run_dir, fmt::join(missing, ", ")));
    if (samples > 0 && got != samples)
        throw AdapterError(fmt::format("{}: OpenCompass predicted {} of the {} samples expected under {}: a score over them would be partial; "
                                       "rerun the trial, or set samples = {} for the dataset if that is its size",
                                       dataset, got, samples, run_dir, got));
}

Result combine(const std::vector<std::vector<Subset>>& parts) {
    Result r;
    r.harness = "opencompass";
    std::map<std::string, Mean> weighted, naive;
    std::map<std::string, double> summed;
    std::set<std::string> unsupported;
    long total = 0;
    std::size_t subsets = 0;
    for (const auto& part : parts) subsets += part.size();
    const bool several = parts.size() > 1 || subsets > 1;
    for (const auto& part : parts) {
        for (const auto& s : part) {
            total += s.samples;
            for (const auto& [metric, value] : s.scores) {
                const MetricKind kind = metric_kind(metric);
                if (kind == MetricKind::count) {
                    summed[metric] += value;
                    continue;
                }
                if (several && kind == MetricKind::other) {
                    unsupported.insert(fmt::format("{} (not a mean over samples: not recombined)", metric));
                    continue;
                }
                weighted[metric].add(value * static_cast<double>(s.samples), s.samples);
                naive[metric].add(value);
            }
        }
    }
    for (const auto& [metric, m] : weighted) {
        if (!several) {
            r.scores[metric] = naive[metric].value();  // the harness's own number, as it wrote it
            continue;
        }
        if (m.count == 0) throw AdapterError(fmt::format("no predictions behind {}: the prediction files are empty", metric));
        r.scores[metric] = m.value();
        if (parts.size() == 1 && subsets > 1) r.scores[metric + "_naive_average"] = naive[metric].value();
    }
    for (const auto& [metric, n] : summed) r.scores[metric] = n;
    r.unsupported.assign(unsupported.begin(), unsupported.end());
    if (total > 0) r.samples = total;
    if (r.scores.empty()) throw AdapterError("no score of this dataset can be recombined: set shard = false for it");
    return r;
}

std::string newest_run(const std::string& work_dir) {
    std::string best;
    for (const auto& d : subdirs(work_dir)) {
        const std::string name = std::filesystem::path(d).filename().string();
        // <YYYYmmdd_HHMMSS>, what main.py names each run (datetime.now().strftime('%Y%m%d_%H%M%S')).
        if (name.size() == 15 && name[8] == '_' && name > std::filesystem::path(best).filename().string()) best = d;
    }
    if (best.empty()) throw AdapterError(fmt::format("OpenCompass left no <YYYYmmdd_HHMMSS> run under {}: see its output above", work_dir));
    return best;
}

std::vector<SummaryRow> parse_summary(std::string_view csv) {
    std::vector<SummaryRow> rows;
    std::size_t at = 0;
    bool header = true;
    while (at < csv.size()) {
        const auto nl = csv.find('\n', at);
        std::string_view line = csv.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
        at = nl == std::string_view::npos ? csv.size() : nl + 1;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        std::vector<std::string> cells;
        std::size_t from = 0;
        for (std::size_t i = 0; i <= line.size() && cells.size() < 5; ++i)
            if (i == line.size() || line[i] == ',') {
                cells.emplace_back(line.substr(from, i - from));
                from = i + 1;
            }
        if (cells.size() < 4 || cells[0].empty() || cells[2].empty()) continue;
        if (header && cells[0] == "dataset") {
            header = false;
            continue;
        }
        rows.push_back({cells[0], cells[1], cells[2], cells[3]});
    }
    return rows;
}

nlohmann::json summary_details(const Result& r, const std::vector<SummaryRow>& rows, const std::vector<std::string>& abbrs) {
    nlohmann::json out = nlohmann::json::object();
    const std::set<std::string> wanted(abbrs.begin(), abbrs.end());
    for (const auto& [name, value] : r.scores) {
        (void)value;
        constexpr std::string_view kNaive = "_naive_average";
        const std::string metric = name.ends_with(kNaive) ? name.substr(0, name.size() - kNaive.size()) : name;
        // One value agreed by every subset's row of this metric, or none.
        const auto agreed = [&](std::string SummaryRow::*field) -> std::string {
            std::set<std::string> seen, covered;
            for (const auto& row : rows)
                if (row.metric == metric && wanted.count(row.dataset)) {
                    seen.insert(row.*field);
                    covered.insert(row.dataset);
                }
            if (seen.size() != 1 || covered.size() != wanted.size() || *seen.begin() == "-" || seen.begin()->empty()) return "";
            return *seen.begin();
        };
        nlohmann::json d{{"measure", name}};
        if (const auto v = agreed(&SummaryRow::version); !v.empty()) d["version"] = v;
        if (const auto m = agreed(&SummaryRow::mode); !m.empty()) d["mode"] = m;
        if (d.size() > 1) out[name] = std::move(d);
    }
    return out;
}

}  // namespace acme::adapters::opencompass
