#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "evalsched/cli/render.hpp"
#include "evalsched/cli/report.hpp"

using namespace acme::evalsched;
using nlohmann::json;

namespace {
json report() {
    return json{{"name", "run7"},
                {"checkpoints", {{{"id", 1}, {"checkpoint", "step-100"}}, {{"id", 2}, {"checkpoint", "step-200"}}}},
                {"rows", {{{"dataset", "mmlu"}, {"metric", "accuracy"}, {"values", {{"1", 0.41}, {"2", 0.47}}}},
                          {{"dataset", "gsm8k"}, {"metric", ""}, {"values", {{"2", "failed: ValueError (framework)"}}}}}}};
}
}  // namespace

TEST_CASE("report --matrix: datasets down, checkpoints across, in every format") {
    const std::string t = render_report(report(), "table", {}, true);
    CHECK(t.find("dataset  metric    step-100  step-200") == 0);
    CHECK(t.find("mmlu     accuracy  0.41      0.47") != std::string::npos);
    CHECK(t.find("failed: ValueError") != std::string::npos);
    CHECK(render_report(report(), "csv", {}, true).find("gsm8k,,-,failed: ValueError (framework)") != std::string::npos);
    CHECK(render_report(report(), "md", {}, true).find("| --- | --- | ---: | ---: |") != std::string::npos);
    CHECK_THROWS_AS(render_report(report(), "xml"), std::invalid_argument);
}

namespace {
json evaluation() {
    return json{{"id", 3},
                {"name", "run7"},
                {"checkpoint", "step-100"},
                {"user", "alice"},
                {"state", "active"},
                {"suite", "m"},
                {"path", "/ckpt/run7/step-100"},
                {"trials", {{"pending", 0}, {"queued", 0}, {"running", 1}, {"done", 3}, {"failed", 0}, {"cancelled", 0}, {"submitting", 0}}},
                {"datasets", {{"total", 3}, {"scored", 1}, {"scoring", 1}, {"running", 1}, {"queued", 0}, {"failed", 0}, {"cancelled", 0}}},
                {"dataset_list",
                 {{{"dataset", "gsm8k"}, {"state", "scored"}, {"detail", ""}, {"scores", {{"acc", 0.71}}}},
                  {{"dataset", "longqa"}, {"state", "scoring"}, {"detail", "metric job running on n3"}, {"scores", json::object()}},
                  {{"dataset", "mmlu"}, {"state", "running"}, {"detail", "on n1"}, {"scores", json::object()}}}},
                {"trial_list",
                 {{{"id", 15}, {"trial", "run7/step-100/longqa#3of13"}, {"datasets", "longqa"}, {"gpus", 1}, {"state", "done"},
                   {"attempts", 1}, {"node", "n1"}, {"job_id", 346}, {"median_s", 231.0}, {"conservative", false}, {"reason", ""}}}},
                {"metric_list",
                 {{{"dataset", "longqa"}, {"after_trials", 2}, {"state", "running"}, {"node", "n3"}, {"job_id", 60}, {"reason", ""}}}},
                {"scheduler",
                 {{"eta", {{"finish_at", 1000.0 + 840}, {"waiting", false}, {"basis", "plan of 2 trials left on 8 GPUs"}, {"stale", false}}},
                  {"trouble", json::array()}}}};
}
}  // namespace

TEST_CASE("status ID: progress in datasets, the forecast labelled as an estimate with its basis, a line per dataset") {
    const std::string shown = render_evaluation(evaluation(), {}, 1000);
    CHECK(shown.find("progress: 1/3 datasets scored, 1 running, 1 scoring, 0 failed (trials 3/4 done)") != std::string::npos);
    CHECK(shown.find("ETA ~14m00s (estimate, ") != std::string::npos);
    CHECK(shown.find("basis: plan of 2 trials left on 8 GPUs") != std::string::npos);
    CHECK(shown.find("gsm8k    scored   ") != std::string::npos);
    CHECK(shown.find("acc=0.71") != std::string::npos);
    CHECK(shown.find("mmlu     running  on n1") != std::string::npos);
    CHECK(shown.find("METRIC JOB  AFTER     STATE    NODE  JOB  REASON") != std::string::npos);
    CHECK(shown.find("   15  longqa#3of13     1  done") != std::string::npos);  // which shard
}

TEST_CASE("nothing can start: waiting for GPUs, no number; slurmctld unreachable: the trouble with the time it began") {
    json e = evaluation();
    e["scheduler"]["eta"] = {{"finish_at", nullptr}, {"waiting", true}, {"basis", "x"}, {"reason", "a trial needs 4 GPUs on one node"}};
    CHECK(eta_text(e, 1000, true) == "waiting for GPUs: a trial needs 4 GPUs on one node");
    e["scheduler"]["eta"]["since"] = 990.0;
    CHECK(eta_text(e, 1000, true) == "waiting for GPUs since " + clock_time(990, 1000) + ": a trial needs 4 GPUs on one node");
    const std::string shown = render_evaluation(e, {}, 1000);
    CHECK(shown.find("ETA ~") == std::string::npos);
    // Said once: no trouble line repeats the waiting state's reason.
    CHECK(shown.find("trouble") == std::string::npos);
    CHECK(shown.find("a trial needs 4 GPUs on one node") == shown.rfind("a trial needs 4 GPUs on one node"));
    e["scheduler"]["trouble"] = {{{"kind", "controller"}, {"since", 990.0}, {"text", "cannot reach slurmctld (timeout)"}}};
    CHECK(eta_text(e, 1000, true) == "ETA unknown: slurmctld unreachable");
    const auto lines = trouble_lines(e, 1000);
    REQUIRE(!lines.empty());
    CHECK(lines[0] == "trouble since " + clock_time(990, 1000) + ": cannot reach slurmctld (timeout)");
}

TEST_CASE("status ID caps its lines to the width; --long keeps every cell whole; -P joins with '|'") {
    json e = evaluation();
    e["trial_list"][0]["reason"] = std::string(300, 'r');
    acme::util::TableStyle narrow;
    narrow.width = 80;
    for (std::size_t at = 0, end; at < render_evaluation(e, narrow, 1000).size(); at = end + 1) {
        const std::string s = render_evaluation(e, narrow, 1000);
        end = s.find('\n', at);
        if (end == std::string::npos) break;
        CHECK(end - at <= 80);
    }
    acme::util::TableStyle full;
    full.width = 0;
    CHECK(render_evaluation(e, full, 1000).find(std::string(300, 'r')) != std::string::npos);
    acme::util::TableStyle p;
    p.width = 0;
    p.parsable2 = true;
    CHECK(render_evaluation(e, p, 1000).find("gsm8k|scored||acc=0.71\n") != std::string::npos);
}

TEST_CASE("status ID: a trial running as a step of a pilot shows job.step, as sacct names it") {
    json e = evaluation();
    e["trial_list"][0]["state"] = "running";
    e["trial_list"][0]["job_id"] = 346;
    e["trial_list"][0]["step_id"] = 2;
    CHECK(render_evaluation(e, {}, 1000).find(" 346.2 ") != std::string::npos);
    e["trial_list"][0].erase("step_id");
    CHECK(render_evaluation(e, {}, 1000).find(" 346.") == std::string::npos);
}
