#include <doctest/doctest.h>

#include <limits>
#include <map>

#include "evalsched/core/decisions.hpp"
#include "evalsched/store/rows.hpp"

using namespace acme::evalsched;

namespace {

PendingTrial trial(std::string id, double median, std::string ckpt = "c1") {
    PendingTrial t;
    t.id = std::move(id);
    t.checkpoint = std::move(ckpt);
    t.median_s = median;
    t.p90_s = median * 1.2;
    t.startup_s = 30;
    t.stage_s = 40;
    return t;
}

NodeWindow node(std::string name, int free, std::vector<std::string> staged = {}) {
    NodeWindow n;
    n.node = std::move(name);
    n.total_gpus = 4;
    n.free_gpus = free;
    n.staged = std::move(staged);
    return n;
}

}  // namespace

TEST_CASE("decisions: a failure is retried only when another run can succeed, and only so often") {
    CHECK(retries("infrastructure", 1, 3));
    CHECK(retries("unknown", 2, 3));
    CHECK_FALSE(retries("unknown", 3, 3));
    CHECK_FALSE(retries("infrastructure", 3, 3));
    CHECK_FALSE(retries("framework", 1, 3));
    CHECK_FALSE(retries("script", 1, 3));
    CHECK_FALSE(retries("infrastructure", 1, 1));
}

TEST_CASE("decisions: only an infrastructure failure blames its node") {
    CHECK(node_to_avoid("infrastructure", "n2") == "n2");
    CHECK(node_to_avoid("unknown", "n2").empty());
    CHECK(node_to_avoid("script", "n2").empty());
}

TEST_CASE("decisions: node lists match whole names and never repeat one") {
    CHECK(contains_node("n1,n12", "n12"));
    CHECK_FALSE(contains_node("n1,n12", "n2"));
    CHECK_FALSE(contains_node("", "n1"));
    CHECK(add_node("", "n1") == "n1");
    CHECK(add_node("n1", "n2") == "n1,n2");
    CHECK(add_node("n1,n2", "n1") == "n1,n2");
    CHECK(add_node("n1", "") == "n1");
}

TEST_CASE("decisions: a retry never lands on the node it avoids, even where its checkpoint is staged") {
    const std::vector<PendingTrial> trials{trial("retry", 600), trial("fresh", 300)};
    // n1 holds the checkpoint (the planner's first preference) and failed the retry.
    const Plan p = plan_round(trials, {{"retry", "n1"}}, {node("n1", 4, {"c1"}), node("n2", 4)});
    std::map<std::string, std::string> where;
    for (const auto& x : p.submit) where[x.trial] = x.node;
    REQUIRE(where.count("retry"));
    CHECK(where["retry"] == "n2");
    CHECK(where.count("fresh"));
    CHECK(p.submit.front().trial == "retry");  // planned first
}

TEST_CASE("decisions: the retries' GPUs are taken before the rest is planned") {
    const std::vector<PendingTrial> trials{trial("retry", 600), trial("a", 300), trial("b", 300)};
    const Plan p = plan_round(trials, {{"retry", "n1"}}, {node("n1", 1), node("n2", 1)});
    // Two free GPUs, three trials: the retry takes n2, one other n1, the third waits.
    CHECK(p.submit.size() == 2);
    int on_n2 = 0;
    for (const auto& x : p.submit) on_n2 += x.node == "n2";
    CHECK(on_n2 == 1);
    CHECK(p.hold.size() == 1);
}

TEST_CASE("decisions: a retry that may use no node waits") {
    const std::vector<PendingTrial> trials{trial("retry", 600)};
    const Plan p = plan_round(trials, {{"retry", "n1,n2"}}, {node("n1", 4), node("n2", 4)});
    CHECK(p.submit.empty());
}

TEST_CASE("decisions: without retries a round is the planner's plan") {
    const std::vector<PendingTrial> trials{trial("a", 600), trial("b", 300), trial("c", 100, "c2")};
    const std::vector<NodeWindow> nodes{node("n1", 2, {"c2"}), node("n2", 2)};
    const Plan round = plan_round(trials, {}, nodes);
    const Plan direct = plan(trials, nodes);
    REQUIRE(round.submit.size() == direct.submit.size());
    for (std::size_t i = 0; i < round.submit.size(); ++i) {
        CHECK(round.submit[i].trial == direct.submit[i].trial);
        CHECK(round.submit[i].node == direct.submit[i].node);
        CHECK(round.submit[i].time_limit_s == direct.submit[i].time_limit_s);
    }
    CHECK(round.lower_bound_s == direct.lower_bound_s);
}

TEST_CASE("decisions: a metric job gives up when inference failed or was cancelled") {
    auto d = decide_metric({{"t1", "done", "", 11}, {"t2", "failed", "oom (framework)", std::nullopt}});
    CHECK(d.kind == MetricDecision::Kind::give_up);
    CHECK(d.state == "failed");
    CHECK(d.reason == "inference failed: t2 (oom (framework))");
    d = decide_metric({{"t1", "cancelled", "", std::nullopt}, {"t2", "running", "", 12}});
    CHECK(d.kind == MetricDecision::Kind::give_up);
    CHECK(d.state == "cancelled");
    CHECK(d.reason == "inference cancelled: t1");
}

TEST_CASE("decisions: a metric job is chained once every unfinished trial is a job") {
    CHECK(decide_metric({{"t1", "pending", "", std::nullopt}, {"t2", "queued", "", 12}}).kind == MetricDecision::Kind::wait);
    // Being submitted: no job id to chain to yet.
    CHECK(decide_metric({{"t1", "submitting", "", std::nullopt}}).kind == MetricDecision::Kind::wait);
    auto d = decide_metric({{"t1", "done", "", 11}, {"t2", "queued", "", 12}, {"t3", "running", "", 13}});
    CHECK(d.kind == MetricDecision::Kind::submit);
    CHECK(d.after == std::vector<std::int64_t>{12, 13});
    d = decide_metric({{"t1", "done", "", 11}});
    CHECK(d.kind == MetricDecision::Kind::submit);
    CHECK(d.after.empty());
    CHECK(decide_metric({}).kind == MetricDecision::Kind::submit);
}

TEST_CASE("decisions: a metric job's --time is twice its estimate and two minutes, five minutes at least") {
    CHECK(metric_time_limit_s(0) == 300);
    CHECK(metric_time_limit_s(60) == 300);
    CHECK(metric_time_limit_s(600) == 1320);
    CHECK(metric_time_limit_s(-5) == 300);
}

TEST_CASE("decisions: a metric job's --time-min is the same without the floor, and never above its --time") {
    CHECK(metric_time_min_s(0) == 120);
    CHECK(metric_time_min_s(60) == 240);
    CHECK(metric_time_min_s(-5) == 120);
    for (double estimate : {-5.0, 0.0, 60.0, 89.0, 90.0, 600.0})
        CHECK(metric_time_min_s(estimate) <= metric_time_limit_s(estimate));
}
