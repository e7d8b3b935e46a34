// acme-eval-lmeval against lm-evaluation-harness as it is upstream (EleutherAI/lm-evaluation-harness
// 4e7e0d47f, lm_eval 0.4.13.dev0): every name suites/core.toml gives lm_eval is one its task
// registry knows, the versions it accepts, the URL local-completions is given, when a shard's
// few-shot exemplars differ from the whole run's, and shard records it refuses.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "evalsched/adapters/harness_files.hpp"
#include "evalsched/adapters/lmeval_output.hpp"
#include "evalsched/core/suite.hpp"

using namespace acme::adapters;
using nlohmann::json;

namespace {
// The source tree ($srcdir under automake's harness; where it was configured otherwise).
std::string lmeval_source_root() {
    const char* s = std::getenv("srcdir");
    return s ? s : ACME_SRCDIR;
}

struct Upstream {
    std::string kind;  // task, group, tag
    long shots = 0;
    std::string sampler;
};

// tests/data/upstream/lm-eval-4e7e0d47-tasks.txt: name, kind, num_fewshot, sampler (its header
// says how it was made from the pinned commit).
std::map<std::string, Upstream> upstream_registry() {
    std::ifstream in(lmeval_source_root() + "/tests/data/upstream/lm-eval-4e7e0d47-tasks.txt");
    std::map<std::string, Upstream> out;
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        const auto cols = split_list(line, '\t');
        if (cols.size() != 4) continue;
        out[cols[0]] = {cols[1], cols[2] == "-" ? 0 : std::stol(cols[2]), cols[3]};
    }
    return out;
}
}  // namespace

TEST_CASE("every task, group and tag suites/core.toml names exists in lm-eval at 4e7e0d47, as what the suite takes it for") {
    const auto reg = upstream_registry();
    REQUIRE(reg.size() > 10000);  // the data file was read
    const acme::evalsched::Suite s = acme::evalsched::load_suite(lmeval_source_root() + "/suites/core.toml");
    for (const auto& g : s.groups) {
        const auto it = reg.find(g.name);
        CHECK_MESSAGE(it != reg.end(), "group ", g.name, " is no lm-eval name");
        if (it != reg.end()) CHECK_MESSAGE((it->second.kind == "group" || it->second.kind == "tag"), g.name, " is an lm-eval ", it->second.kind);
    }
    for (const auto& d : s.datasets) {
        const auto it = reg.find(d.name);
        REQUIRE_MESSAGE(it != reg.end(), "dataset ", d.name, " is no lm-eval task: lm_eval would say 'Tasks not found'");
        // --samples selects documents of tasks only: a group or tag must be written as its leaves.
        CHECK_MESSAGE(it->second.kind == "task", d.name, " is an lm-eval ", it->second.kind, ", not a task");
        // The suite says its sharded tasks recombine exactly: none may draw random exemplars.
        if (d.shard)
            CHECK_MESSAGE((it->second.shots == 0 || it->second.sampler == "first_n"), d.name, " is ", it->second.shots, "-shot with the ",
                          it->second.sampler, " sampler: set shard = false");
    }
    // squadv2's per-sample values are (prediction, reference) pairs scored over the whole set.
    REQUIRE(s.find("squadv2"));
    CHECK_FALSE(s.find("squadv2")->shard);
    CHECK_FALSE(s.find("gsm8k")->shard);
    CHECK(s.find("gsm8k_cot")->shard);  // 8-shot, but first_n: the same exemplars in every shard
}

TEST_CASE("lm-eval versions: 0.4.9 and later run; 0.4.8 (no --samples) and an unknown version are refused with one line") {
    CHECK_NOTHROW(lmeval::check_version("0.4.9", "/v/bin/lm_eval"));
    CHECK_NOTHROW(lmeval::check_version("0.4.9.1", "/v/bin/lm_eval"));
    CHECK_NOTHROW(lmeval::check_version("0.4.13.dev0", "/v/bin/lm_eval"));
    CHECK_NOTHROW(lmeval::check_version("0.5.0.dev1", "/v/bin/lm_eval"));
    CHECK_THROWS_WITH_AS(lmeval::check_version("0.4.8", "/v/bin/lm_eval"),
                         "lm-evaluation-harness 0.4.8 (/v/bin/lm_eval) is too old: acme-eval-lmeval needs 0.4.9 or later, whose --samples "
                         "selects a shard's documents; upgrade it (pip install -U 'lm_eval>=0.4.9')",
                         AdapterError);
    CHECK_THROWS_WITH_AS(lmeval::check_version("0.3.0", "x"), doctest::Contains("too old"), AdapterError);
    CHECK_THROWS_WITH_AS(lmeval::check_version("", "/v/bin/lm_eval"), doctest::Contains("cannot tell which lm-evaluation-harness /v/bin/lm_eval is"),
                         AdapterError);
}

TEST_CASE("local-completions gets the completions endpoint, whether given evalsched's {base_url} or the full URL") {
    CHECK(lmeval::completions_url("http://127.0.0.1:8000") == "http://127.0.0.1:8000/v1/completions");
    CHECK(lmeval::completions_url("http://127.0.0.1:8000/") == "http://127.0.0.1:8000/v1/completions");
    CHECK(lmeval::completions_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1/completions");
    CHECK(lmeval::completions_url("http://h:8000/v1/completions") == "http://h:8000/v1/completions");
    CHECK(lmeval::completions_url("https://api.example/openai/v1/completions") == "https://api.example/openai/v1/completions");
}

TEST_CASE("a shard's few-shot exemplars: random (default sampler, n > 0) differ from the whole run's; first_n and 0-shot do not") {
    // configs and n-shot as lm_eval/evaluator_utils.py writes them (TaskConfig.to_dict).
    const json r = json::parse(R"({"results": {},
      "configs": {"gsm8k": {"num_fewshot": 5, "fewshot_config": {"sampler": "default", "split": "train"}},
                  "gsm8k_cot": {"num_fewshot": 8, "fewshot_config": {"sampler": "first_n"}},
                  "arc_easy": {"num_fewshot": 0, "fewshot_config": {"sampler": "default"}},
                  "old": {"num_fewshot": 3}},
      "n-shot": {"gsm8k": 5, "gsm8k_cot": 8, "arc_easy": 0, "arc_5": 5},
      "n-samples": {"gsm8k": {"original": 1319, "effective": 660}, "bad": {"effective": "x"}}})");
    CHECK(lmeval::fewshot_dependence(r, "gsm8k") ==
          "gsm8k: 5-shot with the default sampler, a shard draws other exemplars than the whole run for every document after its start");
    CHECK(lmeval::fewshot_dependence(r, "gsm8k_cot").empty());
    CHECK(lmeval::fewshot_dependence(r, "arc_easy").empty());
    CHECK_FALSE(lmeval::fewshot_dependence(r, "arc_5").empty());  // --num_fewshot 5, no config: the default sampler
    CHECK_FALSE(lmeval::fewshot_dependence(r, "old").empty());    // lm-eval 0.4.9: no fewshot_config when the yaml has none
    CHECK(lmeval::fewshot_dependence(r, "absent").empty());
    CHECK(lmeval::effective_samples(r, "gsm8k") == 660);
    CHECK_FALSE(lmeval::effective_samples(r, "bad").has_value());
    CHECK_FALSE(lmeval::effective_samples(r, "absent").has_value());
}

TEST_CASE("a shard record with a member missing or mistyped is refused with one line, never read past") {
    const auto rec = lmeval::parse_shard_record(R"({"task": "t", "shard": 1, "num_shards": 2, "begin": 20, "end": 40, "samples": 40})", "s.json");
    CHECK(rec.begin == 20);
    CHECK(rec.end == 40);
    CHECK(rec.samples == 40);
    CHECK_THROWS_WITH_AS(lmeval::parse_shard_record(R"({"begin": 0, "samples": 40})", "s.json"),
                         "s.json is not the adapter's shard record (no integer \"end\"): rerun the trial", AdapterError);
    CHECK_THROWS_WITH_AS(lmeval::parse_shard_record(R"({"begin": 0, "end": "40", "samples": 40})", "s.json"), doctest::Contains("\"end\""), AdapterError);
    CHECK_THROWS_WITH_AS(lmeval::parse_shard_record("[1, 2]", "s.json"), doctest::Contains("no integer \"begin\""), AdapterError);
    CHECK_THROWS_WITH_AS(lmeval::parse_shard_record("{", "s.json"), doctest::Contains("s.json is not the adapter's shard record"), AdapterError);
    CHECK_THROWS_WITH_AS(lmeval::parse_shard_record(R"({"begin": 30, "end": 20, "samples": 40})", "s.json"), doctest::Contains("documents 30 to 20"),
                         AdapterError);
    // A results file without "results" or with a non-object one: refused, not read past.
    CHECK_THROWS_WITH_AS(lmeval::task_scores(json::parse(R"({"results": [1]})"), "t", "r.json"), doctest::Contains("no \"results\" object"),
                         AdapterError);
    CHECK_THROWS_WITH_AS(lmeval::task_scores(json::object(), "t", "r.json"), doctest::Contains("no \"results\" object"), AdapterError);
}

TEST_CASE("squadv2's per-sample pairs and a custom aggregation's source are named, not averaged") {
    // squadv2 is a Python-class task: no metric_list; each sample's metrics are (predictions,
    // references) pairs (lm_eval/tasks/squadv2/task.py process_results).
    const std::string line =
        R"({"doc_id": 0, "filter": "none", "metrics": ["exact", "f1"], "exact": [{"id": "a", "prediction_text": "x"}, {"id": "a", "answers": {}}], "f1": [{}, {}]})"
        "\n";
    lmeval::Aggregate agg;
    lmeval::add_samples(agg, line, "squadv2", {}, "samples_squadv2.jsonl");
    CHECK(agg.metrics.empty());
    CHECK(agg.unsupported == std::set<std::string>{"exact (non-numeric per-sample aggregation)", "f1 (non-numeric per-sample aggregation)"});
    const json cb = json::parse(R"({"results": {}, "configs": {"cb": {"metric_list": [{"metric": "acc"},
        {"metric": "f1", "aggregation": "def cb_multi_fi(items):\n    from sklearn.metrics import f1_score\n"}]}}})");
    const auto how = lmeval::aggregations(cb, "cb");
    CHECK(how.at("acc") == "mean");
    CHECK(how.at("f1") == "custom");
}
