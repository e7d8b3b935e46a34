// acme-eval-opencompass's checks against what OpenCompass 0.5.3 (a5acc4bb) really does: each
// evaluator's metric recombined by what it is, a partial run refused, the trial's record read
// without undefined behaviour, and every dataset a shipped suite names checked against the
// upstream config list in tests/data/upstream/opencompass-a5acc4bb-datasets.txt.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "evalsched/adapters/opencompass_output.hpp"
#include "evalsched/core/suite.hpp"

using namespace acme::adapters;

namespace {
std::string source_root() { return ACME_SRCDIR; }

// "config F.C VAR..." and "abbrs F.C VAR ABBR..." lines of the upstream list.
struct Upstream {
    std::map<std::string, std::set<std::string>> exports;
    std::map<std::string, std::vector<std::string>> abbrs;  // "F.C VAR" -> abbrs
};
Upstream upstream() {
    Upstream u;
    std::ifstream in(source_root() + "/tests/data/upstream/opencompass-a5acc4bb-datasets.txt");
    REQUIRE(in.good());
    for (std::string line; std::getline(in, line);) {
        std::istringstream words(line);
        std::string kind, config, var, abbr;
        words >> kind >> config;
        if (kind == "config")
            while (words >> var) u.exports[config].insert(var);
        else if (kind == "abbrs" && words >> var)
            while (words >> abbr) u.abbrs[config + " " + var].push_back(abbr);
    }
    return u;
}
}  // namespace

TEST_CASE("every dataset of the shipped OpenCompass suite is a config and exported list of OpenCompass a5acc4bb") {
    const Upstream u = upstream();
    REQUIRE(u.exports.size() > 1000);
    CHECK(u.exports.at("gsm8k.gsm8k_gen").count("gsm8k_datasets") == 1);
    const acme::evalsched::Suite s = acme::evalsched::load_suite(source_root() + "/suites/opencompass.toml");
    for (const auto& d : s.datasets) {
        // FAMILY.CONFIG, or FAMILY.CONFIG.VAR for a list not named FAMILY_datasets.
        const auto dot = d.name.find('.'), dot2 = d.name.find('.', dot + 1);
        const std::string config = d.name.substr(0, dot2), var = dot2 == std::string::npos ? d.name.substr(0, dot) + "_datasets" : d.name.substr(dot2 + 1);
        INFO(d.name);
        REQUIRE(u.exports.count(config) == 1);
        CHECK(u.exports.at(config).count(var) == 1);
        // A dataset of several subsets cannot be sharded (test_range selects within one subset).
        const auto a = u.abbrs.find(config + " " + var);
        REQUIRE(a != u.abbrs.end());
        if (a->second.size() > 1) CHECK_FALSE(d.shard);
        CHECK(*d.samples >= static_cast<long>(a->second.size()));
    }
    CHECK(u.abbrs.at("bbh.bbh_gen bbh_datasets").size() == 27);
    CHECK(u.abbrs.at("mmlu.mmlu_gen mmlu_datasets").size() == 57);
}

TEST_CASE("OpenCompass metrics recombine by what they are: means weighted, counts summed, rouge never") {
    CHECK(opencompass::metric_kind("score") == opencompass::MetricKind::mean);  // BBH, TriviaQA, NQ, EM, TheoremQA, MBPP
    CHECK(opencompass::metric_kind("accuracy") == opencompass::MetricKind::mean);
    CHECK(opencompass::metric_kind("humaneval_pass@1") == opencompass::MetricKind::mean);
    CHECK(opencompass::metric_kind("wrong_answer") == opencompass::MetricKind::count);
    CHECK(opencompass::metric_kind("rouge1") == opencompass::MetricKind::other);
    CHECK(opencompass::metric_kind("bleu") == opencompass::MetricKind::other);
    // BBH: subsets that report only `score`, 4 and 12 samples.
    const Result bbh = opencompass::combine({{{"bbh-snarks", {{"score", 50}}, 4}, {"bbh-navigate", {{"score", 100}}, 12}}});
    CHECK(bbh.scores.at("score") == doctest::Approx(87.5));
    CHECK(bbh.scores.at("score_naive_average") == doctest::Approx(75));
    // mbpp in two shards: score by samples, MBPPEvaluator's counts summed.
    const Result mbpp = opencompass::combine({{{"mbpp_shard0of2", {{"score", 40}, {"pass", 2}, {"failed", 3}}, 5}},
                                              {{"mbpp_shard1of2", {{"score", 80}, {"pass", 4}, {"failed", 1}}, 5}}});
    CHECK(mbpp.scores.at("score") == doctest::Approx(60));
    CHECK(mbpp.scores.at("pass") == doctest::Approx(6));
    CHECK(mbpp.scores.at("failed") == doctest::Approx(4));
    // Xsum whole: RougeEvaluator's numbers as it wrote them; sharded: refused, nothing recombinable.
    CHECK(opencompass::combine({{{"Xsum", {{"rouge1", 30}, {"rouge2", 9}, {"rougeL", 25}}, 10}}}).scores.at("rouge2") == doctest::Approx(9));
    CHECK_THROWS_WITH_AS(opencompass::combine({{{"Xsum_shard0of2", {{"rouge1", 30}}, 5}}, {{"Xsum_shard1of2", {{"rouge1", 20}}, 5}}}),
                         doctest::Contains("set shard = false"), AdapterError);
}

TEST_CASE("a partial OpenCompass run is refused, naming what is missing") {
    // The config OpenCompass dumped (mmengine Config.dump): the model's abbr is no dataset's.
    const std::string dump = "models = [\n    dict(abbr='evalsched', path='/ck'),\n]\ndatasets = [\n    dict(abbr='race-middle', reader_cfg=dict()),\n"
                             "    dict(abbr=\"race-high\"),\n]\nwork_dir = 'x'\n";
    CHECK(opencompass::dumped_dataset_abbrs(dump, "c.py") == std::vector<std::string>{"race-middle", "race-high"});
    CHECK_THROWS_WITH_AS(opencompass::dumped_dataset_abbrs("models = [dict(abbr='evalsched')]\n", "c.py"), doctest::Contains("c.py holds no datasets list"), AdapterError);
    CHECK_THROWS_WITH_AS(opencompass::dumped_dataset_abbrs("datasets = []\n", "c.py"), doctest::Contains("names no abbr"), AdapterError);
    // race-high died of an OOM: OpenCompass exited 0 all the same.
    CHECK_THROWS_WITH_AS(opencompass::check_complete("race.race_gen", "/w/ts", {{"race-middle", 10, true}, {"race-high", -1, false}}, 20, true),
                         doctest::Contains("race.race_gen: OpenCompass finished 1 of 2 subsets under /w/ts; missing race-high (no predictions"), AdapterError);
    // Its evaluator failed: predictions but no results.
    CHECK_THROWS_WITH_AS(opencompass::check_complete("race.race_gen", "/w/ts", {{"race-middle", 10, true}, {"race-high", 10, false}}, 20, true),
                         doctest::Contains("missing race-high (no results"), AdapterError);
    // Every subset, but fewer samples than the suite's count.
    CHECK_THROWS_WITH_AS(opencompass::check_complete("race.race_gen", "/w/ts", {{"race-middle", 10, true}, {"race-high", 9, true}}, 20, true),
                         doctest::Contains("predicted 19 of the 20 samples"), AdapterError);
    CHECK_NOTHROW(opencompass::check_complete("race.race_gen", "/w/ts", {{"race-middle", 10, true}, {"race-high", 10, true}}, 20, true));
    CHECK_NOTHROW(opencompass::check_complete("race.race_gen", "/w/ts", {{"race-middle", 10, false}, {"race-high", 10, false}}, 0, false));
}

TEST_CASE("the trial's record is read member by member: a missing or mistyped one is refused in one line") {
    const opencompass::PartRecord r{"gsm8k.gsm8k_gen", 1, 2, 20, 40, 40};
    const opencompass::PartRecord back = opencompass::parse_part_record(opencompass::part_record_json(r), "p.json");
    CHECK(back.dataset == r.dataset);
    CHECK(back.begin == 20);
    CHECK(back.end == 40);
    CHECK(back.samples == 40);
    for (const char* bad : {R"({"dataset": "g", "shard": 0, "num_shards": 2, "end": 20, "samples": 40})",
                            R"({"dataset": "g", "shard": 0, "num_shards": 2, "begin": "0", "end": 20, "samples": 40})", "[1, 2]", "{",
                            R"({"dataset": "g", "shard": 3, "num_shards": 2, "begin": 0, "end": 20, "samples": 40})"})
        CHECK_THROWS_WITH_AS(opencompass::parse_part_record(bad, "p.json"), doctest::Contains("p.json is not the adapter's record of the trial"), AdapterError);
}

TEST_CASE("OpenCompass's summary gives each score its version and mode where every subset agrees") {
    // As opencompass/summarizers/default.py writes it: a header, rows per abbr and metric.
    const auto rows = opencompass::parse_summary(
        "dataset,version,metric,mode,evalsched\n"
        "gsm8k_shard0of2,1d7fe4,accuracy,gen,40.00\n"
        "gsm8k_shard1of2,1d7fe4,accuracy,gen,50.00\r\n"
        "\n"
        "lukaemon_mmlu_a,aaaaaa,accuracy,ppl,30.00\n"
        "lukaemon_mmlu_b,bbbbbb,accuracy,ppl,31.00\n"
        "odd line\n"
        "xsum,-,rouge1,gen,12.00\n");
    REQUIRE(rows.size() == 5);
    CHECK(rows[1].dataset == "gsm8k_shard1of2");
    CHECK(rows[1].mode == "gen");

    Result gsm8k;
    gsm8k.scores = {{"accuracy", 45.0}};
    const auto d = opencompass::summary_details(gsm8k, rows, {"gsm8k_shard0of2", "gsm8k_shard1of2"});
    CHECK(d == nlohmann::json::parse(R"({"accuracy": {"measure": "accuracy", "version": "1d7fe4", "mode": "gen"}})"));

    // Subsets of other prompt hashes: no version, the mode they share; the naive average too.
    Result mmlu;
    mmlu.scores = {{"accuracy", 30.5}, {"accuracy_naive_average", 30.5}};
    const auto m = opencompass::summary_details(mmlu, rows, {"lukaemon_mmlu_a", "lukaemon_mmlu_b"});
    CHECK(m == nlohmann::json::parse(R"({"accuracy": {"measure": "accuracy", "mode": "ppl"},
                                         "accuracy_naive_average": {"measure": "accuracy_naive_average", "mode": "ppl"}})"));
    // A subset the summary does not list, or a "-" version: nothing claimed.
    CHECK(opencompass::summary_details(mmlu, rows, {"lukaemon_mmlu_a", "lukaemon_mmlu_c"}).empty());
    Result xsum;
    xsum.scores = {{"rouge1", 12.0}};
    CHECK(opencompass::summary_details(xsum, rows, {"xsum"}) == nlohmann::json::parse(R"({"rouge1": {"measure": "rouge1", "mode": "gen"}})"));
}
