#include <doctest/doctest.h>

#include <limits>

#include <nlohmann/json.hpp>

#include "evalsched/cli/watch.hpp"
#include "evalsched/core/forecast.hpp"
#include "evalsched/cli/render.hpp"
#include "evalsched/daemon/sched/progress.hpp"
#include "evalsched/daemon/sched_status.hpp"

using namespace acme::evalsched;
using nlohmann::json;

namespace {
PendingTrial trial(std::string id, int gpus, double median, std::string ckpt = "run7/step-1") {
    PendingTrial t;
    t.id = std::move(id);
    t.checkpoint = std::move(ckpt);
    t.gpus = gpus;
    t.median_s = median;
    t.p90_s = median;
    return t;
}
NodeWindow node(std::string name, int total, int free, double window = std::numeric_limits<double>::infinity()) {
    NodeWindow w;
    w.node = std::move(name);
    w.total_gpus = total;
    w.free_gpus = free;
    w.window_s = window;
    return w;
}
}  // namespace

TEST_CASE("ETA: the plan's finish on the free GPUs and those our running trials give back, not work over running GPUs") {
    // 1 free GPU now; a running trial frees a second one in 100 s. Three trials of 300, 200, 100 s:
    // LPT puts 300 on the free GPU (0-300), 200 on the freed one (100-300), 100 after (300-400).
    const PendingTrial pending[] = {trial("a", 1, 300), trial("b", 1, 200), trial("c", 1, 100)};
    HeldTrial running{"r", "run7/step-1", "n1", 1, 100, 0};
    const NodeWindow nodes[] = {node("n1", 2, 1)};
    const Forecast f = forecast(pending, std::span(&running, 1), nodes);
    const auto& c = f.by_checkpoint.at("run7/step-1");
    REQUIRE(c.finish_s);
    CHECK(*c.finish_s == doctest::Approx(400));
    CHECK(c.trials_left == 4);
    CHECK(f.gpus_seen == 2);
}

TEST_CASE("ETA: no GPU free and none of ours running is 'waiting', never a number") {
    const PendingTrial pending[] = {trial("a", 1, 300)};
    const NodeWindow nodes[] = {node("n1", 4, 0), node("n2", 4, 0)};
    const Forecast f = forecast(pending, {}, nodes);
    const auto& c = f.by_checkpoint.at("run7/step-1");
    CHECK_FALSE(c.finish_s);
    CHECK(c.waiting == 1);
    CHECK(c.waiting_reason.find("needs 1 GPU on one node") != std::string::npos);
}

TEST_CASE("ETA: a window too short for a trial leaves it waiting; metric jobs extend the finish; the queue ahead counts") {
    const PendingTrial too_long[] = {trial("a", 1, 3600)};
    const NodeWindow short_window[] = {node("n1", 4, 4, 600)};
    CHECK_FALSE(forecast(too_long, {}, short_window).by_checkpoint.at("run7/step-1").finish_s);

    PendingTrial first = trial("x", 1, 100, "run7/step-1");
    first.metric_s = 50;
    PendingTrial second = trial("y", 1, 100, "run7/step-2");
    second.checkpoint_rank = 1;  // submitted later: after the first checkpoint's trials
    const PendingTrial both[] = {second, first};
    const NodeWindow one_gpu[] = {node("n1", 1, 1)};
    const Forecast f = forecast(both, {}, one_gpu);
    CHECK(*f.by_checkpoint.at("run7/step-1").finish_s == doctest::Approx(150));
    CHECK(*f.by_checkpoint.at("run7/step-2").finish_s == doctest::Approx(200));
}

TEST_CASE("per-dataset progress: shards, bundles, metric jobs and failures as the researcher counts them") {
    const json trials = json::parse(R"J([
        {"datasets": "mmlu", "state": "running", "node": "n1", "reason": "", "trial": "c/mmlu#1of2"},
        {"datasets": "mmlu", "state": "done", "node": "n2", "reason": "", "trial": "c/mmlu#2of2"},
        {"datasets": "boolq,piqa", "state": "done", "node": "n2", "reason": ""},
        {"datasets": "longqa", "state": "done", "node": "n3", "reason": ""},
        {"datasets": "humaneval", "state": "failed", "node": "n3", "reason": "ValueError (framework)"},
        {"datasets": "gsm8k", "state": "pending", "node": "", "reason": ""}])J");
    const json metrics = json::parse(R"J([{"dataset": "longqa", "state": "running", "node": "n3", "reason": ""}])J");
    const json scores = json::parse(R"J([{"dataset": "boolq", "metric": "acc", "value": 0.8}, {"dataset": "piqa", "metric": "acc", "value": 0.7}])J");
    const json p = dataset_progress(trials, metrics, scores);
    CHECK(p["datasets"] == json::parse(R"J({"total": 6, "scored": 2, "scoring": 1, "running": 1, "queued": 1, "failed": 1, "cancelled": 0,
                                           "samples_total": 0, "samples_done": 0, "samples_datasets": 0})J"));
    const json& list = p["dataset_list"];
    CHECK(list[0]["dataset"] == "mmlu");
    CHECK(list[0]["state"] == "running");
    CHECK(list[0]["detail"] == "on n1, 1/2 pieces done");
    CHECK(list[1]["scores"]["acc"] == 0.8);
    CHECK(list[3]["state"] == "scoring");
    CHECK(list[4]["detail"] == "ValueError (framework)");
    CHECK(list[5]["state"] == "queued");
}

TEST_CASE("samples where the suite knows them: a shard done is its share, a dataset done all of it") {
    // mmlu 14042 samples in 3 shards (4680, 4681, 4681), boolq done, piqa without a count.
    const json trials = json::parse(R"J([
        {"datasets": "mmlu", "state": "done", "node": "n1", "reason": "", "shard": 0, "num_shards": 3},
        {"datasets": "mmlu", "state": "running", "node": "n2", "reason": "", "shard": 1, "num_shards": 3},
        {"datasets": "mmlu", "state": "done", "node": "n1", "reason": "", "shard": 2, "num_shards": 3},
        {"datasets": "boolq,piqa", "state": "done", "node": "n2", "reason": "", "shard": 0, "num_shards": 1}])J");
    const json samples = json::parse(R"J({"mmlu": 14042, "boolq": 3270})J");
    const json p = dataset_progress(trials, json::array(), json::array(), samples);
    CHECK(p["datasets"]["samples_total"] == 14042 + 3270);
    CHECK(p["datasets"]["samples_done"] == 4680 + 4681 + 3270);
    CHECK(p["datasets"]["samples_datasets"] == 2);
    CHECK(p["dataset_list"][0]["detail"] == "on n2, 2/3 pieces done (9361/14042 samples)");
    CHECK(p["dataset_list"][2]["samples"].is_null());
    json e{{"datasets", p["datasets"]}, {"trials", {{"done", 3}, {"running", 1}}}};
    CHECK(progress_summary(e) == "2/3 datasets scored (12,631/17,312 samples of 2 datasets), 1 running, 0 failed (trials 3/4 done)");
    e["datasets"]["samples_datasets"] = 3;
    CHECK(progress_summary(e).starts_with("2/3 datasets scored (12,631/17,312 samples), 1 running"));
}

TEST_CASE("waiting for GPUs is said once, since it began; held trials are trouble only while something else could run") {
    SchedulerStatus s;
    EvalForecast waiting;
    waiting.basis = "plan";
    waiting.waiting_reason = "a trial needs 4 GPUs on one node; at most 0 free or held by evalsched on any node";
    waiting.held = "needs 4 free GPUs on one node; the most free now is 0";
    s.publish({{1, waiting}}, 100);
    s.publish({{1, waiting}}, 130);
    json v = s.of_evaluation(1);
    CHECK(v["eta"]["waiting"] == true);
    CHECK(v["eta"]["since"] == 100.0);
    CHECK(v["trouble"].empty());
    EvalForecast later = waiting;
    later.finish_at = 900;  // a place found (a window), though nothing of it runs yet
    s.publish({{1, later}}, 160);
    v = s.of_evaluation(1);
    CHECK(v["eta"]["waiting"] == false);
    CHECK_FALSE(v["eta"].contains("since"));
    REQUIRE(v["trouble"].size() == 1);
    CHECK(v["trouble"][0]["kind"] == "held");
    CHECK(v["trouble"][0]["since"] == 100.0);  // held since the first round, not since it stopped waiting
    s.controller_failed("Connection refused", 200);
    CHECK(s.of_evaluation(1)["trouble"][0]["kind"] == "controller");
}

TEST_CASE("watch off a terminal prints only what changed, never the same line twice") {
    json e = json::parse(R"J({"id": 1, "state": "active",
        "trials": {"pending": 1, "running": 1, "done": 0},
        "datasets": {"total": 2, "scored": 0, "running": 1, "queued": 1, "failed": 0},
        "dataset_list": [{"dataset": "a", "state": "running", "detail": "on n1", "scores": {}},
                         {"dataset": "b", "state": "queued", "detail": "", "scores": {}}],
        "scheduler": {"eta": {"finish_at": 5000, "waiting": false, "basis": "plan"}, "trouble": []}})J");
    Watcher w(Watcher::Mode::lines, 80);
    const std::string first = w.update(e, 1000);
    CHECK(first.find("a running on n1\n") != std::string::npos);
    CHECK(first.find("0/2 datasets scored") != std::string::npos);
    CHECK(w.update(e, 1002).empty());
    CHECK(w.update(e, 1060).empty());  // time passing alone is no change: the ETA is a clock time
    e["scheduler"]["trouble"] = json::parse(R"J([{"kind": "controller", "since": 1100, "text": "cannot reach slurmctld"}])J");
    const std::string trouble = w.update(e, 1101);
    CHECK(trouble.find("trouble since ") != std::string::npos);
    CHECK(trouble.find("ETA unknown: slurmctld unreachable") != std::string::npos);
    CHECK(w.update(e, 1103).empty());
    e["scheduler"]["trouble"] = json::array();
    CHECK(w.update(e, 1200).find("resolved: ") != std::string::npos);

    Watcher j(Watcher::Mode::json, 80);
    const std::string events = j.update(e, 1000);
    CHECK(events.find(R"("event":"dataset")") != std::string::npos);
    CHECK(events.find(R"("event":"progress")") != std::string::npos);
    CHECK(j.update(e, 1005).empty());
}
