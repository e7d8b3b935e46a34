// Issue 38 item 8: `evalsched report` with the columns researchers know from the harnesses
// (lm-eval's Tasks|Version|Filter|n-shot|Metric|Value|Stderr, OpenCompass's
// dataset|version|metric|mode) and an average row per comparable metric.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evalsched/cli/report.hpp"
#include "evalsched/adapters/harness_files.hpp"
#include "evalsched/adapters/lmeval_output.hpp"
#include "evalsched/cli/report_html.hpp"
#include "evalsched/daemon/sched/job_files.hpp"
#include "evalsched/daemon/state.hpp"
#include "evalsched/store/schema.hpp"
#include "tests/unit/temp_dir.hpp"
#include "tests/unit/text_lines.hpp"

using namespace acme::evalsched;
using nlohmann::json;
using acme::test::lines_of;

namespace {

// The daemon's answer for a run of two checkpoints: two lm-eval tasks scored with acc, one with
// exact_match under its strict-match filter, and an OpenCompass dataset (version hash, mode).
json report() {
    return json::parse(R"J({"name": "run7",
      "checkpoints": [{"id": 1, "checkpoint": "step-100"}, {"id": 2, "checkpoint": "step-200"}],
      "rows": [
        {"dataset": "arc_easy", "metric": "acc", "measure": "acc", "version": "1", "n_shot": 0, "filter": "none",
         "values": {"1": 0.5, "2": 0.6}, "stderr": {"1": 0.0103, "2": 0.0101}},
        {"dataset": "gsm8k", "metric": "exact_match.strict-match", "measure": "exact_match", "filter": "strict-match",
         "version": "3", "n_shot": 5, "values": {"1": 0.25, "2": 0.3125}, "stderr": {"1": 0.0119, "2": 0.0128}},
        {"dataset": "piqa", "metric": "acc", "measure": "acc", "version": "1", "n_shot": 0, "filter": "none",
         "values": {"1": 0.7, "2": 0.75}, "stderr": {"1": 0.0107}},
        {"dataset": "siqa", "metric": "accuracy", "version": "e8d7bc", "mode": "ppl", "values": {"1": 41.5, "2": 43.0}}],
      "failures": []})J");
}


}  // namespace

TEST_CASE("report: version, filter, n-shot, metric and mode, each checkpoint's value with its stderr, an average of comparable metrics") {
    acme::util::TableStyle wide;
    wide.width = 0;
    const auto lines = lines_of(render_report(report(), "table", wide));
    REQUIRE(lines.size() == 6);
    CHECK(lines[0] == "dataset       version  filter        n-shot  metric       mode         step-100         step-200");
    CHECK(lines[1] == "arc_easy      1        none          0       acc          -     0.5000 ± 0.0103  0.6000 ± 0.0101");
    CHECK(lines[2] == "gsm8k         3        strict-match  5       exact_match  -     0.2500 ± 0.0119  0.3125 ± 0.0128");
    CHECK(lines[3] == "piqa          1        none          0       acc          -     0.7000 ± 0.0107           0.7500");
    CHECK(lines[4] == "siqa          e8d7bc   -             -       accuracy     ppl           41.5000          43.0000");
    // acc is reported by two datasets: their unweighted mean per checkpoint.
    CHECK(lines[5] == "average of 2  -        none          -       acc          -              0.6000           0.6750");

    // csv stays the matrix scripts read by position.
    const auto csv = lines_of(render_report(report(), "csv"));
    CHECK(csv[0] == "dataset,metric,step-100,step-200");
    CHECK(csv[2] == "gsm8k,exact_match.strict-match,0.25,0.3125");

    const auto md = lines_of(render_report(report(), "md"));
    CHECK(md[0] == "| dataset | version | filter | n-shot | metric | mode | step-100 | step-200 |");
    CHECK(md[1] == "| --- | --- | --- | --- | --- | --- | ---: | ---: |");

    const json j = json::parse(render_report(report(), "json"));
    REQUIRE(j["averages"].size() == 1);
    CHECK(j["averages"][0]["metric"] == "acc");
    CHECK(j["averages"][0]["datasets"] == json::array({"arc_easy", "piqa"}));
    CHECK(j["averages"][0]["values"]["2"].get<double>() == doctest::Approx(0.675));
    CHECK(j["rows"][1]["stderr"]["2"].get<double>() == doctest::Approx(0.0128));
}

TEST_CASE("report: a checkpoint missing a dataset's score gets no average; one dataset's metric gets no average row") {
    json r = report();
    r["rows"][2]["values"]["2"] = "failed: cuda_oom (infrastructure)";
    const json j = with_averages(r);
    REQUIRE(j["averages"].size() == 1);
    CHECK(j["averages"][0]["values"].contains("1"));
    CHECK_FALSE(j["averages"][0]["values"].contains("2"));
    acme::util::TableStyle wide;
    wide.width = 0;
    const std::string average = lines_of(render_report(r, "table", wide)).back();
    CHECK(average.starts_with("average of 2  -        none          -       acc          -              0.6000  "));
    CHECK(average.ends_with("  -"));
}

TEST_CASE("report --format html: the harness's columns and the average row in the table") {
    const std::string html = render_report_html(with_averages(report()));
    CHECK(html.find("<th>dataset</th><th>version</th><th>filter</th><th>n-shot</th><th>metric</th><th>mode</th>") != std::string::npos);
    CHECK(html.find("<tr class=\"score-row\"><th>gsm8k</th><td>3</td><td>strict-match</td><td>5</td><td>exact_match</td><td>-</td>"
                    "<td data-step=\"100\">0.25 ± 0.0119</td>") != std::string::npos);
    CHECK(html.find("<tr class=\"average-row\"><th>average of 2</th>") != std::string::npos);
}

namespace {

// Two checkpoints' results files as lm_eval 0.4 writes them (trimmed to the members that matter):
// per-task "versions" and "n-shot", metric keys "<metric>,<filter>", stderrs beside them.
std::string lmeval_results(double gsm8k, double arc) {
    return json{{"results",
                 {{"gsm8k",
                   {{"alias", "gsm8k"}, {"exact_match,strict-match", gsm8k}, {"exact_match_stderr,strict-match", 0.0119},
                    {"exact_match,flexible-extract", gsm8k + 0.05}, {"exact_match_stderr,flexible-extract", 0.0125}}},
                  {"arc_easy", {{"alias", "arc_easy"}, {"acc,none", arc}, {"acc_stderr,none", 0.0103}, {"acc_norm,none", arc - 0.02}, {"acc_norm_stderr,none", "N/A"}}}}},
                {"versions", {{"gsm8k", 3.0}, {"arc_easy", 1.0}}},
                {"n-shot", {{"gsm8k", 5}, {"arc_easy", 0}}},
                {"config", {{"model", "hf"}}}}
        .dump();
}

const char* kTwoDatasets =
    "[suite]\nname = \"t\"\ncommand = \"eval {checkpoint} {dataset} {output}\"\n"
    "[[dataset]]\nname = \"gsm8k\"\nkind = \"generation\"\nprior = \"5m\"\n"
    "[[dataset]]\nname = \"arc_easy\"\nkind = \"multiple_choice\"\nprior = \"5m\"\n";

// One checkpoint evaluated: each trial's result.json written by the lm-eval adapter's code from
// the harness's results, read back by the daemon (scores_of) and stored as a finished attempt.
void evaluate(acme::store::Database& db, const Caller& who, const std::string& checkpoint, double gsm8k, double arc, double now) {
    const auto req = parse_submit(json{{"checkpoint", "/ckpt/run7/" + checkpoint}, {"suite", kTwoDatasets}}.dump());
    create_evaluation(
        db, req, who, "/results",
        [&](const std::string& out) { return make_trials(req.suite, Checkpoint{"run7/" + checkpoint, "\"$S\"", out, ModelSpec{}}, PriorBook{}); },
        now);
    const json results = acme::adapters::lmeval::parse_results(lmeval_results(gsm8k, arc), "results.json");
    for (const auto& t : trials_in_state(db, {"pending"})) {
        const std::string task = t.datasets;
        acme::adapters::Result r;
        r.scores = acme::adapters::lmeval::task_scores(results, task, "results.json");
        r.details = acme::adapters::lmeval::task_details(results, task);
        auto a = begin_attempt(db, t, "n1", 3600, now);
        attempt_submitted(db, a, 50);
        Outcome ok;
        ok.success = true;
        ok.node = "n1";
        ok.scores = scores_of(json::parse(acme::adapters::result_json(r)), task);
        finish_attempt(db, a, ok, "7b", now + 10);
    }
}

}  // namespace

TEST_CASE("report of a run scored by lm-eval: its version, filter, n-shot and stderr per task, as lm-eval's table has them") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const Caller alice{1001, 1001, "alice", false};
    evaluate(db, alice, "step-100", 0.25, 0.5, 1000);
    evaluate(db, alice, "step-200", 0.3125, 0.6, 2000);
    acme::util::TableStyle wide;
    wide.width = 0;
    const auto lines = lines_of(render_report(*report_json(db, "run7", alice), "table", wide));
    REQUIRE(lines.size() == 5);
    CHECK(lines[0] == "dataset   version  filter            n-shot  metric       mode         step-100         step-200");
    CHECK(lines[1] == "arc_easy  1        none              0       acc          -     0.5000 ± 0.0103  0.6000 ± 0.0103");
    CHECK(lines[2] == "arc_easy  1        none              0       acc_norm     -              0.4800           0.5800");
    CHECK(lines[3] == "gsm8k     3        flexible-extract  5       exact_match  -     0.3000 ± 0.0125  0.3625 ± 0.0125");
    CHECK(lines[4] == "gsm8k     3        strict-match      5       exact_match  -     0.2500 ± 0.0119  0.3125 ± 0.0119");
    // No metric and filter is shared by two datasets here: no average row (acc and exact_match
    // are never averaged together).
    CHECK(json::parse(render_report(*report_json(db, "run7", alice), "json"))["averages"].empty());
}
