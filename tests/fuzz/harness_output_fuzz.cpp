// libFuzzer target for the harness adapters' result-file parsers (lm-evaluation-harness
// results_*.json and samples_*.jsonl, the lm-eval adapter's shard record, lm-eval's version
// string and a --base-url; OpenCompass results/<abbr>/<dataset>.json): any input is
// either read or refused with an AdapterError; nothing else may escape, crash or hang.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "evalsched/adapters/harness_files.hpp"
#include "evalsched/adapters/lmeval_output.hpp"
#include "evalsched/adapters/opencompass_output.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace acme::adapters;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const auto j = lmeval::parse_results(text, "f");
        for (auto it = j["results"].begin(); it != j["results"].end(); ++it) {
            for (const auto& leaf : lmeval::leaves(j, it.key())) {
                (void)lmeval::aggregations(j, leaf);
                (void)lmeval::fewshot_dependence(j, leaf);
                (void)lmeval::effective_samples(j, leaf);
            }
            try {
                (void)lmeval::task_scores(j, it.key(), "f");
            } catch (const AdapterError&) {
            }
        }
    } catch (const AdapterError&) {
    }
    try {
        (void)lmeval::parse_shard_record(text, "s");
    } catch (const AdapterError&) {
    }
    try {
        lmeval::check_version(text, "v");
    } catch (const AdapterError&) {
    }
    (void)lmeval::completions_url(text);
    try {
        lmeval::Aggregate agg;
        lmeval::add_samples(agg, text, "t", {{"acc", "mean"}, {"bleu", "bleu"}}, "s");
        (void)agg.samples();
    } catch (const AdapterError&) {
    }
    try {
        opencompass::Subset sub{"x", opencompass::parse_result(text, "r"), 0};
        sub.samples = 3;
        (void)opencompass::combine({{sub}, {sub}});
    } catch (const AdapterError&) {
    }
    try {
        (void)opencompass::count_predictions(text, "p");
    } catch (const AdapterError&) {
    }
    try {
        (void)opencompass::parse_part_record(text, "p");
    } catch (const AdapterError&) {
    }
    try {
        (void)opencompass::dumped_dataset_abbrs(text, "c");
    } catch (const AdapterError&) {
    }
    {
        // The summary CSV, and what it gives the report for a score of each row's abbr.
        const auto rows = opencompass::parse_summary(text);
        Result r;
        std::vector<std::string> abbrs;
        for (const auto& row : rows) {
            r.scores[row.metric] = 1;
            abbrs.push_back(row.dataset);
        }
        (void)opencompass::summary_details(r, rows, abbrs);
    }
    return 0;
}
