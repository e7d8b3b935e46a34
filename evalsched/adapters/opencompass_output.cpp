#include "evalsched/adapters/opencompass_output.hpp"

#include <filesystem>
#include <set>

#include <fmt/format.h>
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

bool mean_metric(std::string_view name) {
    static const std::set<std::string_view> means{"accuracy", "acc", "exact_match", "em", "correct", "correct_rate", "humaneval_pass@1",
                                                  "mbpp_pass@1", "score_acc"};
    return means.count(name) || name.starts_with("pass@") || name.ends_with("_accuracy") || name.ends_with("_pass@1");
}

Result combine(const std::vector<std::vector<Subset>>& parts) {
    Result r;
    r.harness = "opencompass";
    std::map<std::string, Mean> weighted, naive;
    std::set<std::string> unsupported;
    long total = 0;
    std::size_t subsets = 0;
    for (const auto& part : parts) subsets += part.size();
    const bool several = parts.size() > 1 || subsets > 1;
    for (const auto& part : parts) {
        for (const auto& s : part) {
            total += s.samples;
            for (const auto& [metric, value] : s.scores) {
                if (several && !mean_metric(metric)) {
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

}  // namespace acme::adapters::opencompass
