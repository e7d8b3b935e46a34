// The learned fallback's promises: run-specific detail is normalised away, the same corpus gives
// the same model, the model survives its own text (its calibrated threshold included), a broken
// or newer model file is refused with a line while a version 1 file still reads, in the engine it
// answers only where no rule does and never drains or requeues, and as the tie-breaker it
// chooses among tied rules of different categories only over its threshold, never into
// infrastructure, and only when it is on.
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

TEST_CASE("the model file carries its calibrated threshold; a version 1 file reads at 0.9, a newer one is refused") {
    auto m = FallbackModel::train(examples());
    CHECK_FALSE(m.calibrated());
    CHECK(m.threshold() == FallbackModel::kDefaultThreshold);
    m.set_threshold(0.75);
    std::string text = m.to_text();
    CHECK(text.starts_with("acme-fallback-model\t2\n"));
    CHECK(text.find("\nthreshold\t0.75\n") != std::string::npos);
    auto back = FallbackModel::parse(text, "m");
    CHECK(back.calibrated());
    CHECK(back.threshold() == 0.75);
    CHECK(back.to_text() == text);
    CHECK(back.predict("nothing in common with any example at all\n").reason == "unknown");

    // The same model as version 1 wrote it: no threshold line.
    std::string v1 = text;
    v1.replace(0, std::string("acme-fallback-model\t2").size(), "acme-fallback-model\t1");
    v1.erase(v1.find("threshold\t0.75\n"), std::string("threshold\t0.75\n").size());
    auto old = FallbackModel::parse(v1, "m");
    CHECK_FALSE(old.calibrated());
    CHECK(old.threshold() == FallbackModel::kDefaultThreshold);
    CHECK(old.reasons() == back.reasons());

    auto refused = [](const std::string& model) -> std::string {
        try {
            FallbackModel::parse(model, "rules.d/fallback.model");
        } catch (const RuleError& e) {
            return e.what();
        }
        return "accepted";
    };
    std::string newer = refused("acme-fallback-model\t3\ntemperature\t1\n");
    CHECK(newer.find("rules.d/fallback.model:1: model format version 3 is newer") != std::string::npos);
    CHECK(newer.find('\n') == std::string::npos);
    CHECK(refused("acme-fallback-model\tx\n").find(":1:") != std::string::npos);
    CHECK(refused("acme-fallback-model\t1\nthreshold\t0.5\n").find(":2: not a temperature") != std::string::npos);
    CHECK(refused("acme-fallback-model\t2\nthreshold\t0.5\nthreshold\t0.6\n").find(":3: threshold listed twice") !=
          std::string::npos);
    CHECK(refused("acme-fallback-model\t2\nthreshold\t0\n").find(":2: threshold is not") != std::string::npos);
    CHECK(refused("acme-fallback-model\t2\nthreshold\t1.5\n").find(":2: threshold is not") != std::string::npos);
    CHECK_THROWS_AS(m.set_threshold(0), RuleError);
}

TEST_CASE("the engine answers at the model's threshold unless a [fallback] key overrides it") {
    auto m = FallbackModel::train(examples());
    m.set_threshold(0.42);
    auto model = std::make_shared<const FallbackModel>(m);
    RuleSet plain = parse_rules("[[rule]]\nid = \"t.oom\"\nreason = \"out_of_memory\"\npattern = 'CUDA out of memory'\n", "t.toml");
    Engine engine(plain, model);
    CHECK(engine.fallback_threshold() == 0.42);
    CHECK(engine.fallback_threshold_source() == "fallback.model");
    CHECK(engine.tie_breaker() == kTieBreakerDefault);
    CHECK(engine.tie_margin() == kTieMarginDefault);

    RuleSet keyed = plain;
    keyed.merge(parse_rules("[fallback]\nthreshold = 0.97\ntie_breaker = true\ntie_margin = 20\n", "50-site.toml"));
    keyed.merge(parse_rules("[fallback]\ntie_margin = 5\n", "60-later.toml"));  // a later file's key wins
    Engine site(keyed, model);
    CHECK(site.fallback_threshold() == 0.97);
    CHECK(site.fallback_threshold_source() == "[fallback] threshold");
    CHECK(site.tie_breaker());
    CHECK(site.tie_margin() == 5);

    Engine none(plain);
    CHECK(none.fallback_threshold() == FallbackModel::kDefaultThreshold);
    CHECK(none.fallback_threshold_source() == "the default");

    CHECK_THROWS_AS(parse_rules("[fallback]\nthreshhold = 0.5\n", "x.toml"), RuleError);
    CHECK_THROWS_AS(parse_rules("[fallback]\nthreshold = 1.5\n", "x.toml"), RuleError);
    CHECK_THROWS_AS(parse_rules("[fallback]\ntie_breaker = \"yes\"\n", "x.toml"), RuleError);
    CHECK_THROWS_AS(parse_rules("[fallback]\ntie_margin = -1\n", "x.toml"), RuleError);
    CHECK_THROWS_AS(parse_rules("[[fallback]]\nthreshold = 0.5\n", "x.toml"), RuleError);
    try {
        parse_rules("[fallback]\nthreshhold = 0.5\n", "x.toml");
    } catch (const RuleError& e) {
        CHECK(std::string(e.what()).find("x.toml:2: unknown key \"threshhold\" in [fallback]") != std::string::npos);
    }
}

namespace {

// A script rule and a framework rule that both fire on one log, the script one first (it wins the
// ranking among equal priorities), and an infrastructure rule.
RuleSet tie_rules(int framework_priority, const std::string& keys) {
    return parse_rules("[[rule]]\nid = \"t.script\"\nreason = \"key_error\"\npattern = 'fatal stop'\npriority = 300\n"
                       "[[rule]]\nid = \"t.framework\"\nreason = \"value_error\"\npattern = 'malformed template field'\n"
                       "priority = " + std::to_string(framework_priority) + "\n"
                       "[[rule]]\nid = \"t.infra\"\nreason = \"node_failure\"\npattern = 'broker peer lost'\npriority = 300\n" +
                           keys,
                       "t.toml");
}

}  // namespace

TEST_CASE("the tie-breaker chooses among tied rules' categories over its threshold, never into infrastructure") {
    auto model = std::make_shared<const FallbackModel>(FallbackModel::train(examples()));
    const std::string framework_log =
        "fatal stop\nthe tokenizer rejected sample 77: malformed template field\nabort: template field malformed\n";
    const std::string infra_log = "fatal stop\nflux broker lost contact with peer fabric lane 4\nabort: broker peer lost\n";
    JobEnd job;
    job.job_exit = ExitStatus{1, 0};
    job.log = framework_log;

    // Off (the default): the ranking decides, and the tie is still reported.
    Engine off(tie_rules(300, "[fallback]\nthreshold = 0.5\ntie_breaker = false\n"), model);
    TieBreak tie;
    Diagnosis d = off.diagnose(job, nullptr, &tie);
    CHECK(d.rule == "t.script");
    REQUIRE(tie.candidates.size() == 2);
    CHECK(tie.candidates[0].rule == "t.script");
    CHECK(tie.candidates[1].rule == "t.framework");
    CHECK(tie.candidates[1].probability > 0.5);
    CHECK_FALSE(tie.decided);
    CHECK(tie.why.find("tie-breaker is off") != std::string::npos);
    CHECK_FALSE(from_fallback(d));

    // On: the framework rule decides, with the fallback's evidence first; recovery refuses it.
    Engine on(tie_rules(300, "[fallback]\nthreshold = 0.5\ntie_breaker = true\n"), model);
    d = on.diagnose(job, nullptr, &tie);
    CHECK(d.rule == "t.framework");
    CHECK(d.reason == "value_error");
    CHECK(tie.decided);
    CHECK(tie.chosen == 1);
    CHECK_FALSE(tie.decided_by.empty());
    CHECK(d.action != Action::drain);
    CHECK(d.action != Action::requeue);
    CHECK(d.confidence <= 0.85);
    REQUIRE(d.evidence.size() >= 2);
    CHECK(d.evidence[0].source == "fallback");
    CHECK(d.evidence[0].text.find("t.script") != std::string::npos);
    CHECK(d.evidence[1].line == 2);
    CHECK(from_fallback(d));
    CHECK(from_model(d));
    CHECK(on.diagnose(job).rule == "t.framework");  // the same without asking for the report

    // Over a threshold it does not reach, the ranking stands.
    Engine strict(tie_rules(300, "[fallback]\nthreshold = 1.0\ntie_breaker = true\n"), model);
    CHECK(strict.diagnose(job, nullptr, &tie).rule == "t.script");
    CHECK(tie.why.find("under the 1.00 threshold") != std::string::npos);

    // A rule 10 below the top ties only within a margin of 10.
    Engine narrow(tie_rules(290, "[fallback]\nthreshold = 0.5\ntie_breaker = true\n"), model);
    CHECK(narrow.diagnose(job, nullptr, &tie).rule == "t.script");
    CHECK(tie.candidates.empty());
    Engine wide(tie_rules(290, "[fallback]\nthreshold = 0.5\ntie_breaker = true\ntie_margin = 10\n"), model);
    CHECK(wide.diagnose(job, nullptr, &tie).rule == "t.framework");
    CHECK(tie.margin == 10);

    // The fallback prefers infrastructure: it never makes the answer that, the ranking stands.
    job.log = infra_log;
    d = on.diagnose(job, nullptr, &tie);
    REQUIRE(tie.candidates.size() == 2);
    CHECK(tie.candidates[1].category == Category::infrastructure);
    CHECK(tie.candidates[1].probability >= 0.5);
    CHECK(d.rule == "t.script");
    CHECK_FALSE(tie.decided);
    CHECK(tie.why.find("never makes an answer infrastructure") != std::string::npos);
    CHECK_FALSE(from_fallback(d));

    // A GPU event on the job's GPU outranks the words: nothing ties with it.
    RuleSet with_event = tie_rules(300, "[fallback]\nthreshold = 0.5\ntie_breaker = true\n");
    with_event.merge(parse_rules("[[gpu_event]]\nid = \"t.xid\"\nkind = \"xid\"\ncodes = [79]\nreason = \"gpu_lost\"\n"
                                 "priority = 1000\n",
                                 "e.toml"));
    Engine events(with_event, model);
    job.log = framework_log;
    job.gpu_events = {{0, "xid", 79, 0, "fell off the bus"}};
    d = events.diagnose(job, nullptr, &tie);
    CHECK(d.reason == "gpu_lost");
    CHECK(tie.candidates.empty());

    // Without a model, the tie is reported and the ranking decides.
    Engine bare(tie_rules(300, "[fallback]\ntie_breaker = true\n"));
    job.gpu_events.clear();
    CHECK(bare.diagnose(job, nullptr, &tie).rule == "t.script");
    CHECK(tie.candidates.size() == 2);
    CHECK(tie.candidates[1].probability < 0);
}

TEST_CASE("in the engine the fallback answers only where no rule does, and never drains or requeues") {
    RuleSet rules = parse_rules("[[rule]]\nid = \"t.oom\"\nreason = \"out_of_memory\"\npattern = 'CUDA out of memory'\n", "t.toml");
    auto model = std::make_shared<const FallbackModel>(FallbackModel::train(examples()));
    FallbackKeys low;
    low.threshold = 0.3;
    Engine engine(rules, model, low);

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

TEST_CASE("the fallback overrules a generic rule only when confident of another category or a specific reason, never into infrastructure") {
    auto model = std::make_shared<const FallbackModel>(FallbackModel::train(examples()));
    // A script rule that decides by an exception class alone, and one that is specific.
    auto rules = [](bool generic, const std::string& keys) {
        return parse_rules(std::string("[[rule]]\nid = \"t.class\"\nreason = \"key_error\"\npattern = 'KeyError:'\npriority = 300\n") +
                               (generic ? "generic = true\n" : "") + keys,
                           "t.toml");
    };
    JobEnd job;
    job.job_exit = ExitStatus{1, 0};
    job.log = "KeyError: 'field'\nthe tokenizer rejected sample 77: malformed template field\nabort: template field malformed\n";

    // Generic, and the fallback is sure of a framework reason: its answer, action none, the rule's line kept.
    Engine overruling(rules(true, "[fallback]\noverrule = 0.5\n"), model);
    CHECK(overruling.overrule() == 0.5);
    Diagnosis d = overruling.diagnose(job);
    CHECK(d.reason == "value_error");
    CHECK(d.rule == "fallback");
    CHECK(d.action == Action::none);
    CHECK(d.confidence <= 0.85);
    REQUIRE(d.evidence.size() >= 2);
    CHECK(d.evidence[0].source == "fallback");
    CHECK(d.evidence[0].text.find("rule t.class (key_error) decides by the exception class alone") != std::string::npos);
    CHECK(d.evidence[1].line == 1);
    CHECK(from_fallback(d));

    // Not generic, a threshold it does not reach, or no model: the rule decides.
    CHECK(Engine(rules(false, "[fallback]\noverrule = 0.5\n"), model).diagnose(job).rule == "t.class");
    CHECK(Engine(rules(true, "[fallback]\noverrule = 1.0\n"), model).diagnose(job).rule == "t.class");
    CHECK(Engine(rules(true, "[fallback]\noverrule = 0.5\n")).diagnose(job).rule == "t.class");
    CHECK(Engine(rules(true, "")).overrule() == kOverruleDefault);

    // The fallback is sure of infrastructure: never that, the rule decides.
    job.log = "KeyError: 'field'\nflux broker lost contact with peer fabric lane 4\nabort: broker peer lost\n";
    CHECK(model->predict(job.log, 0.5).reason == "node_failure");
    d = overruling.diagnose(job);
    CHECK(d.rule == "t.class");
    CHECK(d.reason == "key_error");

    // Within the rule's own category (framework), only toward a reason no generic rule gives: value_error
    // over a RuntimeError's runtime_error when no generic rule says value_error ...
    auto framework = [](const std::string& more) {
        return parse_rules("[[rule]]\nid = \"t.runtime\"\nreason = \"runtime_error\"\npattern = 'RuntimeError:'\npriority = 300\n"
                           "generic = true\n" + more + "[fallback]\noverrule = 0.5\n",
                           "t.toml");
    };
    job.log = "RuntimeError: bad\nthe tokenizer rejected sample 77: malformed template field\nabort: template field malformed\n";
    d = Engine(framework(""), model).diagnose(job);
    CHECK(d.reason == "value_error");
    CHECK(d.rule == "fallback");
    CHECK(d.evidence[0].text.find("rule t.runtime (runtime_error) decides by the exception class alone") != std::string::npos);
    // ... and never when a generic rule gives it too: one exception class says no more than another.
    d = Engine(framework("[[rule]]\nid = \"t.value\"\nreason = \"value_error\"\npattern = 'ValueError:'\npriority = 300\n"
                         "generic = true\n"),
               model)
            .diagnose(job);
    CHECK(d.rule == "t.runtime");
    CHECK(d.reason == "runtime_error");

    // The key's value is checked like the others'.
    CHECK_THROWS_AS(parse_rules("[fallback]\noverrule = 2\n", "x.toml"), RuleError);
    CHECK_THROWS_AS(parse_rules("[[rule]]\nid = \"x\"\nreason = \"key_error\"\npattern = 'x'\ngeneric = 1\n", "x.toml"), RuleError);
}
