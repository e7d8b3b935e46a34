// The learned fallback's promises: run-specific detail is normalised away, the same corpus gives
// the same model, the model survives its own text, a broken model file is refused with a line,
// and in the engine it answers only where no rule does and never drains or requeues.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "common/diagnose/engine.hpp"
#include "common/diagnose/fallback.hpp"
#include "common/diagnose/llm_client.hpp"

using namespace acme::diagnose;

namespace {

bool has(const std::vector<std::string>& features, const std::string& f) {
    return std::find(features.begin(), features.end(), f) != features.end();
}

// Three made-up families of failures, a few logs each, that no shipped rule names.
std::vector<FallbackExample> examples() {
    std::vector<FallbackExample> out;
    for (int i = 0; i < 6; ++i) {
        out.push_back({"node_failure", "step " + std::to_string(i) + "\nflux broker lost contact with peer fabric lane " +
                                           std::to_string(i * 7) + "\nabort: broker peer lost\n",
                       "a" + std::to_string(i % 3), {}});
        out.push_back({"value_error", "step " + std::to_string(i) + "\nthe tokenizer rejected sample " +
                                          std::to_string(i * 13) + ": malformed template field\nabort: template field malformed\n",
                       "b" + std::to_string(i % 3), {}});
        out.push_back({"time_limit", "step " + std::to_string(i) + "\nwallclock budget exhausted for allocation " +
                                         std::to_string(i * 5) + "\nabort: budget exhausted, wallclock\n",
                       "c" + std::to_string(i % 3), {}});
    }
    return out;
}

}  // namespace

TEST_CASE("fallback features drop numbers, hex, paths and ranks, and keep words and word pairs") {
    auto f = fallback_features("[rank3]: RuntimeError: CUDA error at 0x7fe55fb03000 in /home/u/train.py:812\n");
    CHECK(has(f, "runtimeerror"));
    CHECK(has(f, "cuda error"));
    CHECK(has(f, "rank#"));
    CHECK(has(f, "path"));
    CHECK_FALSE(has(f, "home"));
    CHECK(std::none_of(f.begin(), f.end(), [](const std::string& w) { return w.find("7fe5") != std::string::npos; }));
    CHECK(std::is_sorted(f.begin(), f.end()));
}

TEST_CASE("the same examples train the same model, and the model survives its own text") {
    auto a = FallbackModel::train(examples());
    auto b = FallbackModel::train(examples());
    CHECK(a.to_text() == b.to_text());
    auto c = FallbackModel::parse(a.to_text(), "model");
    CHECK(c.to_text() == a.to_text());
    auto p = c.predict("warmup\nflux broker lost contact with peer fabric lane 99\nabort: broker peer lost\n");
    CHECK(p.best == "node_failure");
    CHECK(p.probability > 0.5);
    REQUIRE_FALSE(p.decided_by.empty());
    CHECK(p.decided_by.front().second > 0);
}

TEST_CASE("below the threshold the fallback's answer stays unknown") {
    auto m = FallbackModel::train(examples());
    auto p = m.predict("nothing in common with any example at all\n", 0.99);
    CHECK(p.reason == "unknown");
    CHECK_FALSE(p.best.empty());
}

TEST_CASE("a fallback model that is not one is refused with its line") {
    CHECK_THROWS_AS(FallbackModel::parse("", "m"), RuleError);
    CHECK_THROWS_AS(FallbackModel::parse("not a model\n", "m"), RuleError);
    CHECK_THROWS_AS(FallbackModel::parse("acme-fallback-model\t1\nreason\tno_such_reason\t0\nreason\tkey_error\t0\n", "m"),
                    RuleError);
    CHECK_THROWS_AS(FallbackModel::parse("acme-fallback-model\t1\nreason\tkey_error\t0\nreason\tvalue_error\t0\n"
                                         "feature\tword\t7:1.0\n",
                                         "m"),
                    RuleError);
    CHECK_THROWS_AS(FallbackModel::parse("acme-fallback-model\t1\nreason\tkey_error\t0\n", "m"), RuleError);
    try {
        FallbackModel::parse("acme-fallback-model\t1\ntemperature\t-1\n", "rules.d/fallback.model");
        FAIL("accepted a negative temperature");
    } catch (const RuleError& e) {
        CHECK(std::string(e.what()).find("rules.d/fallback.model:2:") != std::string::npos);
    }
}

TEST_CASE("in the engine the fallback answers only where no rule does, and never drains or requeues") {
    RuleSet rules = parse_rules("[[rule]]\nid = \"t.oom\"\nreason = \"out_of_memory\"\npattern = 'CUDA out of memory'\n", "t.toml");
    auto model = std::make_shared<const FallbackModel>(FallbackModel::train(examples()));
    Engine engine(rules, model, 0.3);

    const std::string lost = "warmup\nflux broker lost contact with peer fabric lane 4\nabort: broker peer lost\n";
    const std::string lost_and_oom = lost + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n";
    JobEnd job;  // its log is a view: the strings above outlive it
    job.job_exit = ExitStatus{1, 0};
    job.log = lost;
    Diagnosis d = engine.diagnose(job);
    CHECK(d.reason == "node_failure");
    CHECK(d.rule == "fallback");
    CHECK(d.action == Action::none);  // node_failure's default is drain: not from a guess
    CHECK(d.confidence <= 0.85);
    REQUIRE_FALSE(d.evidence.empty());
    CHECK(d.evidence.front().source == "fallback");
    CHECK(from_model(d));  // so recovery (faultguard) refuses it, as it refuses an LLM's answer
    CHECK(from_fallback(d));

    job.log = lost_and_oom;
    CHECK(engine.diagnose(job).reason == "out_of_memory");

    job.job_exit = ExitStatus{0, 0};
    CHECK(engine.diagnose(job).reason == "unknown");

    Engine without = engine.with_fallback(nullptr);
    job.job_exit = ExitStatus{1, 0};
    job.log = lost;
    CHECK(without.diagnose(job).reason == "unknown");
}
