#include "common/diagnose/time_split.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

namespace acme::diagnose::corpus {
namespace {

// The record's own words for a job that exited 0: the engine consults nothing for it.
constexpr std::string_view kExitedClean = "the job exited 0: nothing to diagnose";

// No rule decided the row: nothing did, or (records from batch 19 on) the fallback that shipped
// with the rules answered where they did not.
bool no_rule(const FirstSight::Row& row) {
    if (row.rule == "fallback") return true;
    return row.rule == "-" && row.got == unknown_reason().name && row.evidence != kExitedClean;
}

std::string file_name(const std::string& where) {
    auto slash = where.rfind('/');
    return slash == std::string::npos ? where : where.substr(slash + 1);
}

}  // namespace

std::vector<FallbackExample> examples_before(const std::vector<Case>& cases, const std::string& batch) {
    std::vector<FallbackExample> out;
    for (const Case& c : cases)
        if (batch.empty() || c.batch.empty() || c.batch < batch)
            out.push_back({c.expected, c.text, source_group(c), fallback_features(c.text)});
    return out;
}

std::vector<TimeSplit> time_splits(const std::vector<Case>& cases, const std::vector<FirstSight>& records) {
    std::vector<TimeSplit> out;
    for (const FirstSight& record : records) {
        // A case may have moved to another reason's directory since (a label fix): find it by
        // its file name among its batch.
        std::map<std::string, const Case*> mine;
        for (const Case& c : cases)
            if (c.batch == record.batch) mine[c.log.filename().string()] = &c;
        TimeSplit split;
        split.batch = record.batch;
        auto examples = examples_before(cases, record.batch);
        split.trained_on = examples.size();
        split.model = std::make_shared<const FallbackModel>(FallbackModel::train(examples));
        for (const auto& row : record.rows) {
            if (!no_rule(row)) continue;
            auto it = mine.find(file_name(row.where));
            if (it == mine.end())
                throw std::runtime_error(fmt::format("first-sight record of batch {}: case {} is not in the corpus's batch {}",
                                                     record.batch, row.where, record.batch));
            FallbackPrediction p = split.model->predict(it->second->text, 1.0);
            split.trials.push_back({record.batch, row.where, row.expected, p.best, p.probability});
        }
        out.push_back(std::move(split));
    }
    return out;
}

double calibrated_threshold(const std::vector<FallbackTrial>& trials, double precision) {
    for (int step = 0; step <= 13; ++step) {
        double threshold = 0.30 + 0.05 * step;
        int answered = 0, right = 0;
        for (const auto& t : trials)
            if (t.best != unknown_reason().name && t.probability >= threshold) {
                ++answered;
                right += t.best == t.expected;
            }
        if (answered > 0 && (right + 1.0) / (answered + 2.0) >= precision) return threshold;
    }
    return 1.0;
}

std::vector<FirstSight> read_first_sights(const std::filesystem::path& dir) {
    std::vector<std::filesystem::path> paths;
    if (std::filesystem::is_directory(dir))
        for (const auto& entry : std::filesystem::directory_iterator(dir))
            if (entry.path().extension() == ".tsv") paths.push_back(entry.path());
    std::sort(paths.begin(), paths.end());
    std::vector<FirstSight> out;
    for (const auto& path : paths) out.push_back(read_first_sight(path));
    return out;
}

double trained_threshold(const std::vector<Case>& cases, const std::vector<FirstSight>& records) {
    std::vector<FallbackTrial> trials;
    for (const auto& split : time_splits(cases, records)) trials.insert(trials.end(), split.trials.begin(), split.trials.end());
    return calibrated_threshold(trials, kFallbackPrecision);
}

SplitScore score_split(const FirstSight& record, const TimeSplit& split, double threshold) {
    SplitScore out;
    std::map<std::string, const FallbackTrial*> trial;
    for (const auto& t : split.trials) trial[t.where] = &t;
    for (const auto& row : record.rows) {
        const ReasonInfo* expected = find_reason(row.expected);
        // The rules' own verdict: a row the recorded fallback answered is one they left unknown.
        const ReasonInfo* got = row.rule == "fallback" ? &unknown_reason() : find_reason(row.got);
        if (!expected || !got) continue;  // parse_first_sight refused such a record already
        tally(out.without, row.where, *expected, *got, row.evidence);
        if (auto it = trial.find(row.where); it != trial.end() && no_rule(row)) {
            const FallbackTrial& t = *it->second;
            if (t.best != unknown_reason().name && t.probability >= threshold) {
                if (const ReasonInfo* answer = find_reason(t.best)) {
                    ++out.answered;
                    out.right += t.best == t.expected;
                    tally(out.with, row.where, *expected, *answer,
                          fmt::format("the learned fallback (p={:.2f})", t.probability));
                    continue;
                }
            }
        }
        tally(out.with, row.where, *expected, *got, row.evidence);
    }
    return out;
}

}  // namespace acme::diagnose::corpus
