#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>

#include "evalsched/core/planner.hpp"

using namespace acme::evalsched;

namespace {

PendingTrial trial(std::string id, double median, int gpus = 1, std::string ckpt = "c1") {
    PendingTrial t;
    t.id = std::move(id);
    t.checkpoint = std::move(ckpt);
    t.gpus = gpus;
    t.median_s = median;
    t.p90_s = median * 1.2;
    t.startup_s = 30;
    t.stage_s = 40;
    return t;
}

NodeWindow node(std::string name, int free, double window = std::numeric_limits<double>::infinity(), int total = 8) {
    NodeWindow n;
    n.node = std::move(name);
    n.total_gpus = total;
    n.free_gpus = free;
    n.window_s = window;
    return n;
}

// What the plan puts on each node, in GPUs.
std::map<std::string, int> gpus_by_node(const Plan& p) {
    std::map<std::string, int> m;
    for (const auto& x : p.submit) m[x.node] += x.gpus;
    return m;
}

}  // namespace

TEST_CASE("the planner never puts more GPUs on a node than it has free") {
    std::vector<PendingTrial> trials;
    for (int i = 0; i < 40; ++i) trials.push_back(trial("t" + std::to_string(i), 100 + i * 10, 1 + i % 3));
    std::vector<NodeWindow> nodes = {node("n1", 3), node("n2", 8), node("n3", 1), node("n4", 0)};
    const Plan p = plan(trials, nodes);
    const auto used = gpus_by_node(p);
    for (const auto& n : nodes) {
        const int placed = used.count(n.node) ? used.at(n.node) : 0;
        CHECK_MESSAGE(placed <= n.free_gpus, n.node);
    }
    CHECK(p.submit.size() + p.hold.size() == trials.size());
}

TEST_CASE("a trial is only placed in a window its honest --time fits") {
    std::vector<PendingTrial> trials = {trial("long", 3000), trial("short", 100)};
    std::vector<NodeWindow> nodes = {node("n1", 8, 600)};
    const Plan p = plan(trials, nodes);
    REQUIRE(p.submit.size() == 1);
    CHECK(p.submit[0].trial == "short");
    CHECK(p.submit[0].time_limit_s <= 600);
    CHECK(p.submit[0].time_limit_s >= 30 + 120 + 40);  // startup + p90 + staging, at least
    REQUIRE(p.hold.size() == 1);
    CHECK(p.hold[0].trial == "long");
    CHECK(p.hold[0].reason.find("window") != std::string::npos);
}

TEST_CASE("drained or reserved nodes are never planned onto") {
    std::vector<PendingTrial> trials;
    for (int i = 0; i < 10; ++i) trials.push_back(trial("t" + std::to_string(i), 100));
    auto drained = node("n1", 8);
    drained.usable = false;
    const Plan p = plan(trials, std::vector<NodeWindow>{drained, node("n2", 2)});
    for (const auto& x : p.submit) CHECK(x.node == "n2");
    CHECK(p.submit.size() == 2);
    CHECK(p.usable_gpus == 8);
}

TEST_CASE("GPUs per trial are honoured: a 4-GPU trial needs 4 on one node") {
    std::vector<PendingTrial> trials = {trial("big", 500, 4)};
    const Plan p = plan(trials, std::vector<NodeWindow>{node("n1", 3), node("n2", 3)});
    CHECK(p.submit.empty());
    REQUIRE(p.hold.size() == 1);
    CHECK(p.hold[0].reason == "needs 4 free GPUs on one node; the most free now is 3");
    const Plan q = plan(trials, std::vector<NodeWindow>{node("n1", 3), node("n2", 5)});
    REQUIRE(q.submit.size() == 1);
    CHECK(q.submit[0].node == "n2");
    CHECK(q.submit[0].gpus == 4);
}

TEST_CASE("longest trials go first, and earlier checkpoints before later ones") {
    std::vector<PendingTrial> trials = {trial("short", 100), trial("long", 1000), trial("mid", 500)};
    PendingTrial later = trial("later-long", 5000, 1, "c2");
    later.checkpoint_rank = 1;
    trials.push_back(later);
    const Plan p = plan(trials, std::vector<NodeWindow>{node("n1", 2)});
    REQUIRE(p.submit.size() == 2);
    CHECK(p.submit[0].trial == "long");
    CHECK(p.submit[1].trial == "mid");
}

TEST_CASE("a trial with long CPU scoring starts before an equally long one without") {
    auto a = trial("a", 500);
    auto b = trial("b", 500);
    b.metric_s = 900;
    const Plan p = plan(std::vector<PendingTrial>{a, b}, std::vector<NodeWindow>{node("n1", 1)});
    REQUIRE(p.submit.size() == 1);
    CHECK(p.submit[0].trial == "b");
}

TEST_CASE("nodes that already hold the checkpoint are preferred and skip staging time") {
    auto staged = node("n2", 4);
    staged.staged = {"c1"};
    const Plan p = plan(std::vector<PendingTrial>{trial("t", 100)}, std::vector<NodeWindow>{node("n1", 8), staged});
    REQUIRE(p.submit.size() == 1);
    CHECK(p.submit[0].node == "n2");
    CHECK_FALSE(p.submit[0].stages_checkpoint);
    CHECK(p.submit[0].time_limit_s == doctest::Approx(30 + 120 * 1.2 + 120));
}

TEST_CASE("trials of one plan gather on the node being staged rather than staging another") {
    std::vector<PendingTrial> trials = {trial("a", 100), trial("b", 90), trial("c", 80)};
    const Plan p = plan(trials, std::vector<NodeWindow>{node("n1", 8), node("n2", 8)});
    REQUIRE(p.submit.size() == 3);
    for (const auto& x : p.submit) {
        CHECK(x.node == p.submit[0].node);
        CHECK(x.stages_checkpoint);  // all wait for the one copy: their --time includes it
    }
}

TEST_CASE("the plan is the same whatever order trials and nodes come in") {
    std::mt19937 rng(42);
    std::vector<PendingTrial> trials;
    for (int i = 0; i < 60; ++i) trials.push_back(trial("t" + std::to_string(i), 50 + (i * 37) % 900, 1 + (i % 4 == 0)));
    std::vector<NodeWindow> nodes;
    for (int i = 0; i < 6; ++i) nodes.push_back(node("n" + std::to_string(i), 1 + (i * 3) % 8, 400.0 + i * 300));
    const Plan first = plan(trials, nodes);
    for (int round = 0; round < 5; ++round) {
        std::shuffle(trials.begin(), trials.end(), rng);
        std::shuffle(nodes.begin(), nodes.end(), rng);
        const Plan again = plan(trials, nodes);
        REQUIRE(again.submit.size() == first.submit.size());
        for (std::size_t i = 0; i < first.submit.size(); ++i) {
            CHECK(again.submit[i].trial == first.submit[i].trial);
            CHECK(again.submit[i].node == first.submit[i].node);
        }
    }
}

TEST_CASE("the lower bound is max(total work / GPUs, longest trial) and is printed with the plan") {
    std::vector<PendingTrial> trials = {trial("a", 970), trial("b", 170), trial("c", 170)};
    const Plan p = plan(trials, std::vector<NodeWindow>{node("n1", 2, std::numeric_limits<double>::infinity(), 2)});
    CHECK(p.total_work_gpu_s == doctest::Approx(1000 + 200 + 200));
    CHECK(p.lower_bound_s == doctest::Approx(1000));  // the longest trial dominates 1400/2
    const std::string text = format_plan(p);
    CHECK(text.find("submit a on n1 gpus=1 --time=") != std::string::npos);
    CHECK(text.find("lower bound 16m40s = max(work 1400 GPU-s / 2 GPUs, longest trial)") != std::string::npos);
}

TEST_CASE("a trial with an unknown run time is marked in the printed plan") {
    auto t = trial("mystery", 3600);
    t.conservative = true;
    const Plan p = plan(std::vector<PendingTrial>{t}, std::vector<NodeWindow>{node("n1", 8)});
    REQUIRE(p.submit.size() == 1);
    CHECK(p.submit[0].conservative);
    CHECK(format_plan(p).find("submit mystery on n1 gpus=1 --time=01:30:00 (stages checkpoint) (run time unknown: conservative estimate)") != std::string::npos);
}
