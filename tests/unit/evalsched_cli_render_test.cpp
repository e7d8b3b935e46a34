#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "evalsched/cli/render.hpp"

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

TEST_CASE("report: datasets down, checkpoints across, in every format") {
    const std::string t = render_report(report(), "table");
    CHECK(t.find("dataset  metric    step-100  step-200") == 0);
    CHECK(t.find("mmlu     accuracy  0.41      0.47") != std::string::npos);
    CHECK(t.find("failed: ValueError") != std::string::npos);
    CHECK(render_report(report(), "csv").find("gsm8k,,-,failed: ValueError (framework)") != std::string::npos);
    CHECK(render_report(report(), "md").find("| --- | --- | ---: | ---: |") != std::string::npos);
    CHECK_THROWS_AS(render_report(report(), "xml"), std::invalid_argument);
}

TEST_CASE("watch's progress line counts trials and estimates the rest") {
    json e{{"state", "active"},
           {"trials", {{"pending", 5}, {"queued", 1}, {"running", 4}, {"done", 10}, {"failed", 0}, {"cancelled", 0}, {"submitting", 0}}},
           {"remaining_gpu_s", 400.0},
           {"running_gpus", 4}};
    CHECK(render_progress(e, 10) == "[#####.....] 10/20 done, 4 running, 6 pending, 0 failed, ETA 1m40s");
}

TEST_CASE("inference done is not scored: the progress line and the trial table show the metric jobs to go") {
    json e{{"id", 3},
           {"name", "run7"},
           {"checkpoint", "step-100"},
           {"user", "alice"},
           {"state", "active"},
           {"suite", "m"},
           {"path", "/ckpt/run7/step-100"},
           {"trials", {{"pending", 0}, {"queued", 0}, {"running", 0}, {"done", 3}, {"failed", 0}, {"cancelled", 0}, {"submitting", 0}}},
           {"metric_jobs", {{"waiting", 0}, {"queued", 1}, {"running", 1}, {"done", 1}}},
           {"remaining_gpu_s", 0.0},
           {"running_gpus", 0},
           {"trial_list",
            {{{"id", 15}, {"trial", "run7/step-100/longqa#3of13"}, {"datasets", "longqa"}, {"gpus", 1}, {"state", "done"},
              {"attempts", 1}, {"node", "n1"}, {"job_id", 346}, {"median_s", 231.0}, {"conservative", false}, {"reason", ""}}}},
           {"metric_list",
            {{{"dataset", "longqa"}, {"after_trials", 2}, {"state", "running"}, {"node", "n3"}, {"job_id", 60}, {"reason", ""}}}}};
    CHECK(render_progress(e, 10) == "[##########] 3/3 done, 0 running, 0 pending, 0 failed, 2 metric jobs to go, ETA -");
    const std::string shown = render_evaluation(e);
    CHECK(shown.find("METRIC JOB  AFTER     STATE    NODE  JOB  REASON") != std::string::npos);
    CHECK(shown.find("longqa      2 trials  running  n3    60") != std::string::npos);
    CHECK(shown.find("15     longqa#3of13  1     done") != std::string::npos);  // which shard
}
