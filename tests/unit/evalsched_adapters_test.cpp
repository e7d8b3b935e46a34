// The harness adapters' parsing (acme-eval-lmeval, acme-eval-opencompass) on the harnesses' own
// output files: scores read as the harness reported them, shards recombined exactly for mean
// metrics, and every malformed file refused with a line naming it.
#include <doctest/doctest.h>

#include <string>

#include "evalsched/adapters/harness_files.hpp"
#include "evalsched/adapters/lmeval_output.hpp"

using namespace acme::adapters;

namespace {
// Quoted from EleutherAI/lm-evaluation-harness, tests/models/results_deleteme/
// __home__cs29824__matthew__lm-evaluation-harness__examples__dog_steer.csv/
// results_2025-01-21T00-40-03.356274.json (commit 7be00f3b), a results file the harness wrote;
// configs, pretty_env_info and the tokenizer members are shortened, nothing else is changed.
constexpr const char* kRealResults = R"json({
  "results": {
    "mmlu_abstract_algebra": {
      "alias": "abstract_algebra",
      "acc,none": 0.34,
      "acc_stderr,none": 0.047609522856952344
    }
  },
  "group_subtasks": {
    "mmlu_abstract_algebra": []
  },
  "configs": {
    "mmlu_abstract_algebra": {
      "task": "mmlu_abstract_algebra",
      "task_alias": "abstract_algebra",
      "dataset_path": "hails/mmlu_no_train",
      "test_split": "test",
      "metric_list": [
        {
          "metric": "acc",
          "aggregation": "mean",
          "higher_is_better": true
        }
      ],
      "output_type": "multiple_choice"
    }
  },
  "versions": {
    "mmlu_abstract_algebra": 1.0
  },
  "n-shot": {
    "mmlu_abstract_algebra": 0
  },
  "higher_is_better": {
    "mmlu_abstract_algebra": {
      "acc": true
    }
  },
  "n-samples": {
    "mmlu_abstract_algebra": {
      "original": 100,
      "effective": 100
    }
  },
  "config": {
    "model": "sae_steered_beta",
    "batch_size": "auto",
    "batch_sizes": [16],
    "device": "cuda:0",
    "limit": null
  },
  "git_hash": "e16afa2f",
  "date": 1737419939.4888458,
  "task_hashes": {},
  "model_source": "sae_steered_beta",
  "model_name": "/home/cs29824/matthew/lm-evaluation-harness/examples/dog_steer.csv",
  "model_name_sanitized": "__home__cs29824__matthew__lm-evaluation-harness__examples__dog_steer.csv",
  "total_evaluation_time_seconds": "70.06234502233565"
})json";

// A group with filters, as lm_eval/evaluator.py reports gsm8k and a group of two subtasks
// (v0.4 results layout: "<metric>,<filter>" keys, group_subtasks, "N/A" stderrs of groups).
constexpr const char* kGroupResults = R"json({
  "results": {
    "g": {"alias": "g", "acc,none": 0.5, "acc_stderr,none": "N/A"},
    "g_a": {"alias": " - a", "acc,none": 0.25, "acc_stderr,none": 0.1},
    "g_b": {"alias": " - b", "acc,none": 0.75, "acc_stderr,none": 0.1},
    "gsm8k": {"alias": "gsm8k", "exact_match,strict-match": 0.4, "exact_match_stderr,strict-match": 0.01,
              "exact_match,flexible-extract": 0.45, "exact_match_stderr,flexible-extract": 0.01}
  },
  "group_subtasks": {"g": ["g_a", "g_b"], "g_a": [], "g_b": [], "gsm8k": []},
  "configs": {
    "g_a": {"metric_list": [{"metric": "acc", "aggregation": "mean"}]},
    "g_b": {"metric_list": [{"metric": "acc", "aggregation": "mean"}, {"metric": "bleu", "aggregation": "bleu"}]}
  },
  "n-samples": {"g_a": {"original": 4, "effective": 4}, "g_b": {"original": 4, "effective": 4}}
})json";

// samples_<task>_<date_id>.jsonl lines as EvaluationTracker.save_results_samples writes them
// (lm_eval/loggers/evaluation_tracker.py): one JSON object per document and filter.
std::string sample(long doc, double acc, const char* filter = "none") {
    return "{\"doc_id\": " + std::to_string(doc) + ", \"doc\": {\"q\": \"x\"}, \"target\": 0, \"arguments\": {\"gen_args_0\": {\"arg_0\": \"q\", \"arg_1\": \" A\"}}, " +
           "\"resps\": [[[\"-1.5\", \"False\"]]], \"filtered_resps\": [[\"-1.5\", \"False\"]], \"filter\": \"" + filter +
           "\", \"metrics\": [\"acc\"], \"doc_hash\": \"d\", \"prompt_hash\": \"p\", \"target_hash\": \"t\", \"acc\": " + std::to_string(acc) + "}\n";
}
}  // namespace

TEST_CASE("shard ranges follow the suite contract: shards 2i and 2i+1 of 2n tile shard i of n") {
    CHECK(shard_range(10, 0, 3).begin == 0);
    CHECK(shard_range(10, 0, 3).end == 3);
    CHECK(shard_range(10, 2, 3).end == 10);
    for (int i = 0; i < 4; ++i) {
        const Range whole = shard_range(14042, i, 4);
        CHECK(shard_range(14042, 2 * i, 8).begin == whole.begin);
        CHECK(shard_range(14042, 2 * i + 1, 8).end == whole.end);
    }
    CHECK_THROWS_AS(shard_range(10, 3, 3), AdapterError);
    CHECK_THROWS_AS(shard_range(10, 0, 0), AdapterError);
}

TEST_CASE("lm-eval: a real results file gives the harness's own scores, stderr left out") {
    const auto j = lmeval::parse_results(kRealResults, "results.json");
    const auto s = lmeval::task_scores(j, "mmlu_abstract_algebra", "results.json");
    REQUIRE(s.size() == 1);
    CHECK(s.at("acc") == doctest::Approx(0.34));
    CHECK(lmeval::leaves(j, "mmlu_abstract_algebra") == std::vector<std::string>{"mmlu_abstract_algebra"});
    CHECK(lmeval::aggregations(j, "mmlu_abstract_algebra").at("acc") == "mean");
    CHECK(lmeval::date_id_of("/o/m/results_2025-01-21T00-40-03.356274.json") == "2025-01-21T00-40-03.356274");
    CHECK(lmeval::date_id_of("/o/m/other.json").empty());
    CHECK_THROWS_WITH_AS(lmeval::task_scores(j, "hellaswag", "results.json"), doctest::Contains("no results for task hellaswag"), AdapterError);
}

TEST_CASE("lm-eval: filters name their metrics, groups expand to their leaves") {
    const auto j = lmeval::parse_results(kGroupResults, "r.json");
    const auto s = lmeval::task_scores(j, "gsm8k", "r.json");
    CHECK(s.at("exact_match.strict-match") == doctest::Approx(0.4));
    CHECK(s.at("exact_match.flexible-extract") == doctest::Approx(0.45));
    CHECK(s.size() == 2);
    CHECK(lmeval::task_scores(j, "g", "r.json").at("acc") == doctest::Approx(0.5));  // "N/A" stderr skipped
    CHECK(lmeval::leaves(j, "g") == std::vector<std::string>{"g_a", "g_b"});
    CHECK(lmeval::aggregations(j, "g_b").at("bleu") == "bleu");
}

TEST_CASE("lm-eval: two shards' samples recombine into the exact dataset mean; bleu is not averaged") {
    const auto j = lmeval::parse_results(kGroupResults, "r.json");
    lmeval::Aggregate agg;
    // Shard 0 has documents 0-2 of g_a (1 of 3 right), shard 1 document 3 (right) and g_b.
    lmeval::add_samples(agg, sample(0, 1) + sample(1, 0) + sample(2, 0), "g_a", lmeval::aggregations(j, "g_a"), "s0");
    lmeval::add_samples(agg, sample(3, 1), "g_a", lmeval::aggregations(j, "g_a"), "s1");
    lmeval::add_samples(agg, sample(0, 1) + sample(1, 1), "g_b", lmeval::aggregations(j, "g_b"), "s1");
    CHECK(agg.metrics.at("acc").value() == doctest::Approx(4.0 / 6));  // not the mean of shard means
    CHECK(agg.samples() == 6);
    CHECK(agg.unsupported.empty());
    // A document scored twice means the shards overlap: refused, naming the file and line.
    CHECK_THROWS_WITH_AS(lmeval::add_samples(agg, sample(3, 1), "g_a", {}, "s2"), doctest::Contains("s2:1: document 3 of g_a was scored twice"),
                         AdapterError);
    std::string bleu = "{\"doc_id\": 9, \"filter\": \"none\", \"metrics\": [\"bleu\"], \"bleu\": [\"ref\", \"pred\"]}\n";
    lmeval::add_samples(agg, bleu, "g_b", lmeval::aggregations(j, "g_b"), "s3");
    CHECK(agg.unsupported.count("bleu (bleu aggregation)") == 1);
    CHECK(agg.metrics.count("bleu") == 0);
}

TEST_CASE("lm-eval: malformed files are refused with one line naming them") {
    CHECK_THROWS_WITH_AS(lmeval::parse_results("{\"results\": ", "x/results_1.json"), doctest::Contains("x/results_1.json is not JSON"), AdapterError);
    CHECK_THROWS_WITH_AS(lmeval::parse_results("[1]", "f"), doctest::Contains("f is not JSON"), AdapterError);
    CHECK_THROWS_WITH_AS(lmeval::parse_results("{\"config\": {}}", "f"), doctest::Contains("no \"results\" object"), AdapterError);
    lmeval::Aggregate agg;
    CHECK_THROWS_WITH_AS(lmeval::add_samples(agg, "{\"doc_id\": 0}\nnot json\n", "t", {}, "s.jsonl"), doctest::Contains("s.jsonl:2:"), AdapterError);
    const auto j = lmeval::parse_results("{\"results\": {\"t\": {\"alias\": \"t\"}}}", "f");
    CHECK_THROWS_WITH_AS(lmeval::task_scores(j, "t", "f"), doctest::Contains("no numeric metric"), AdapterError);
}

TEST_CASE("the contract's result.json: scores, samples and what could not be aggregated") {
    Result r;
    r.scores = {{"acc", 0.5}};
    r.samples = 6;
    r.unsupported = {"bleu (bleu aggregation)"};
    r.harness = "lm-evaluation-harness";
    const std::string text = result_json(r);
    CHECK(text.find("\"scores\": {\n    \"acc\": 0.5\n  }") != std::string::npos);
    CHECK(text.find("\"samples\": 6") != std::string::npos);
    CHECK(text.find("bleu (bleu aggregation)") != std::string::npos);
    CHECK(split_list("a,,b,") == std::vector<std::string>{"a", "b"});
}

#include "evalsched/adapters/opencompass_output.hpp"
#include "evalsched/core/suite.hpp"

#include <cstdlib>

namespace {
std::string oc_source_root() {
    if (const char* s = std::getenv("srcdir")) return s;
    const std::string here = __FILE__, self = "tests/unit/evalsched_adapters_test.cpp";
    const std::string prefix = here.substr(0, here.size() - self.size());
    return prefix.empty() ? "." : prefix;
}
}  // namespace

TEST_CASE("OpenCompass: results files give their numeric scores; subsets and shards recombine sample-weighted") {
    // results/<model_abbr>/<dataset_abbr>.json as OpenCompassEvalTask writes it (opencompass/tasks/openicl_eval.py):
    // the evaluator's dict, with "details" when --dump-eval-details is given.
    const auto s = opencompass::parse_result(R"({"accuracy": 45.6, "details": {"0": {"correct": true}}})", "r.json");
    CHECK(s.size() == 1);
    CHECK(s.at("accuracy") == doctest::Approx(45.6));
    CHECK_THROWS_WITH_AS(opencompass::parse_result(R"({"error": "answer key missing"})", "r.json"), doctest::Contains("evaluator failed"), AdapterError);
    CHECK_THROWS_WITH_AS(opencompass::parse_result("[1,", "r.json"), doctest::Contains("r.json is not a JSON object"), AdapterError);
    CHECK(opencompass::count_predictions(R"({"0": {"prediction": "A"}, "1": {"prediction": "B"}})", "p.json") == 2);
    // Two subsets of 10 and 30 samples: 50 % and 100 %.
    const Result whole = opencompass::combine({{{"a", {{"accuracy", 50}}, 10}, {"b", {{"accuracy", 100}}, 30}}});
    CHECK(whole.scores.at("accuracy") == doctest::Approx(87.5));
    CHECK(whole.scores.at("accuracy_naive_average") == doctest::Approx(75));
    CHECK(*whole.samples == 40);
    // Two shards; bleu is no mean over samples: not recombined.
    const Result shards = opencompass::combine({{{"x_shard0of2", {{"accuracy", 20}, {"bleu", 3}}, 5}}, {{"x_shard1of2", {{"accuracy", 40}, {"bleu", 4}}, 15}}});
    CHECK(shards.scores.at("accuracy") == doctest::Approx(35));
    CHECK(shards.scores.count("bleu") == 0);
    CHECK(shards.unsupported.size() == 1);
    // One subset, one part: the harness's own numbers, whatever the metric.
    CHECK(opencompass::combine({{{"x", {{"bleu", 3}}, 5}}}).scores.at("bleu") == doctest::Approx(3));
}

TEST_CASE("the shipped suites/opencompass.toml parses, every dataset FAMILY.CONFIG with a sample count") {
    const acme::evalsched::Suite s = acme::evalsched::load_suite(oc_source_root() + "/suites/opencompass.toml");
    CHECK(s.datasets.size() >= 15);
    for (const auto& d : s.datasets) {
        CHECK_MESSAGE(d.samples.has_value(), d.name);
        CHECK_MESSAGE(d.name.find('.') != std::string::npos, d.name);
    }
}
