#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>

#include <fmt/format.h>

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
    // 30 + 120 x 1.2 + 120 = 294 s, asked of Slurm in whole minutes.
    CHECK(p.submit[0].time_limit_s == 300);
}

TEST_CASE("a window checked in seconds is checked against the whole minutes sbatch will ask for") {
    auto tight = node("n1", 8);
    tight.staged = {"c1"};
    tight.window_s = 297;  // holds the 294 s the trial needs, not the 5 minutes it would ask for
    CHECK(plan(std::vector<PendingTrial>{trial("t", 100)}, std::vector<NodeWindow>{tight}).submit.empty());
    tight.window_s = 300;
    CHECK(plan(std::vector<PendingTrial>{trial("t", 100)}, std::vector<NodeWindow>{tight}).submit.size() == 1);
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

// --- pilots: one job per free GPU group that loads the checkpoint once and pulls trials ---

TEST_CASE("pilots never over-commit a window: --time within the window, GPUs within the free ones") {
    std::vector<PendingTrial> ts;
    for (int i = 0; i < 40; ++i) ts.push_back(trial("t" + std::to_string(i), 100 + 37 * i));
    const std::vector<NodeWindow> nodes = {node("n1", 3, 900), node("n2", 8), node("n3", 2, 5000), node("n4", 1, 100)};
    const PilotPlan p = plan_pilots(ts, nodes);
    std::map<std::string, int> used;
    for (const auto& x : p.submit) {
        used[x.node] += x.gpus;
        const auto& n = *std::find_if(nodes.begin(), nodes.end(), [&](const NodeWindow& w) { return w.node == x.node; });
        CHECK(x.time_limit_s <= n.window_s);
        CHECK(x.time_min_s <= x.time_limit_s);
        CHECK(x.time_limit_s <= PilotOptions{}.max_s);
    }
    CHECK(used["n1"] == 3);
    CHECK(used["n2"] == 8);
    CHECK(used["n3"] == 2);
    CHECK(used.count("n4") == 0);  // 100 s: not even startup + the shortest trial fits
}

TEST_CASE("a pilot's --time-min covers startup, staging where the node lacks the checkpoint, and the shortest trial") {
    const std::vector<PendingTrial> ts = {trial("a", 600), trial("b", 100)};
    NodeWindow staged = node("n1", 1);
    staged.staged = {"c1"};
    const std::vector<NodeWindow> nodes = {staged, node("n2", 1)};
    const PilotPlan p = plan_pilots(ts, nodes);
    REQUIRE(p.submit.size() == 2);
    const double shortest = pilot_trial_limit(ts[1], PlanOptions{});
    for (const auto& x : p.submit) {
        if (x.node == "n1") {
            CHECK_FALSE(x.stages_checkpoint);
            CHECK(x.time_min_s == doctest::Approx(30 + shortest));
        } else {
            CHECK(x.stages_checkpoint);
            CHECK(x.time_min_s == doctest::Approx(30 + 40 + shortest));
        }
    }
    CHECK(p.submit[0].node == "n1");  // the node holding the checkpoint first
}

TEST_CASE("pilots are never planned onto drained nodes, and no more pilots than trials are asked for") {
    std::vector<PendingTrial> ts = {trial("a", 300), trial("b", 200), trial("c", 100)};
    NodeWindow drained = node("n1", 8);
    drained.usable = false;
    const std::vector<NodeWindow> nodes = {drained, node("n2", 8)};
    PilotPlan p = plan_pilots(ts, nodes);
    CHECK(p.submit.size() == 3);
    for (const auto& x : p.submit) CHECK(x.node == "n2");
    CHECK(p.usable_gpus == 8);
    // Two pilots already serve this checkpoint: one more covers the three trials.
    p = plan_pilots(ts, nodes, {{pilot_key("c1", 1), 2}});
    CHECK(p.submit.size() == 1);
    p = plan_pilots(ts, nodes, {{pilot_key("c1", 1), 5}});
    CHECK(p.submit.empty());
    CHECK(p.hold.empty());  // served: nothing is held
}

TEST_CASE("a pilot has its trials' GPU count, on one node with that many free") {
    const std::vector<PendingTrial> ts = {trial("wide", 600, 4), trial("narrow", 300, 1)};
    const std::vector<NodeWindow> nodes = {node("n1", 3), node("n2", 4)};
    const PilotPlan p = plan_pilots(ts, nodes);
    REQUIRE(p.submit.size() == 2);
    for (const auto& x : p.submit) {
        if (x.gpus == 4) CHECK(x.node == "n2");
        else CHECK(x.gpus == 1);
    }
    // pilot_next only hands a pilot trials of its own GPU count and checkpoint.
    CHECK(ts[*pilot_next(ts, "c1", 4, 1e9)].id == "wide");
    CHECK(ts[*pilot_next(ts, "c1", 1, 1e9)].id == "narrow");
    CHECK_FALSE(pilot_next(ts, "c2", 1, 1e9).has_value());
}

TEST_CASE("a running pilot takes the longest trial that fits what is left of its granted time") {
    const std::vector<PendingTrial> ts = {trial("s", 100), trial("l", 1000), trial("m", 500)};
    CHECK(ts[*pilot_next(ts, "c1", 1, 1e9)].id == "l");
    CHECK(ts[*pilot_next(ts, "c1", 1, pilot_trial_limit(ts[2], PlanOptions{}))].id == "m");
    CHECK(ts[*pilot_next(ts, "c1", 1, pilot_trial_limit(ts[0], PlanOptions{}))].id == "s");
    CHECK_FALSE(pilot_next(ts, "c1", 1, pilot_trial_limit(ts[0], PlanOptions{}) - 1).has_value());
}

TEST_CASE("without a window that fits a pilot, the trials are held with the reason") {
    const std::vector<PendingTrial> ts = {trial("a", 600), trial("b", 300)};
    const PilotPlan p = plan_pilots(ts, std::vector<NodeWindow>{node("n1", 8, 120)});
    CHECK(p.submit.empty());
    REQUIRE(p.hold.size() == 2);
    CHECK(p.hold[0].reason.find("window") != std::string::npos);
}

TEST_CASE("the pilot plan is the same whatever order trials and nodes come in") {
    std::vector<PendingTrial> ts;
    for (int i = 0; i < 30; ++i) ts.push_back(trial("t" + std::to_string(i), 50 + (i * 7919) % 1500, 1 + i % 3 / 2, i % 4 ? "c1" : "c2"));
    std::vector<NodeWindow> nodes = {node("n1", 5, 3000), node("n2", 8), node("n3", 2, 1500), node("n4", 7, 8000)};
    auto key = [](const PilotPlan& p) {
        std::vector<std::string> v;
        for (const auto& x : p.submit) v.push_back(fmt::format("{} {} {} {} {}", x.node, x.checkpoint, x.gpus, x.time_min_s, x.time_limit_s));
        std::sort(v.begin(), v.end());
        return v;
    };
    const auto first = key(plan_pilots(ts, nodes));
    std::mt19937 rng(3);
    for (int i = 0; i < 10; ++i) {
        std::shuffle(ts.begin(), ts.end(), rng);
        std::shuffle(nodes.begin(), nodes.end(), rng);
        CHECK(key(plan_pilots(ts, nodes)) == first);
    }
}

TEST_CASE("tail-aware splitting: whole while there is plenty left, halves and quarters near the end") {
    const PendingTrial t = trial("t", 800);
    CHECK(tail_split_factor(t, 100000, 10) == 1);                  // 10,000 s a GPU left: 800 s is small
    CHECK(tail_split_factor(t, 10 * 1200.0 / 1, 10) == 2);         // a third of 1,200 s a GPU: 400 s pieces
    CHECK(tail_split_factor(t, 10 * 600.0, 10) == 4);              // 200 s pieces
    CHECK(tail_split_factor(t, 0, 10) == 8);                       // never below min_piece_s (60 s)
    CHECK(tail_split_factor(trial("short", 100), 0, 10) == 1);     // 50 s pieces would be below it
    CHECK(tail_split_factor(t, 1000, 0) == 1);                     // no pilot serving: nothing to balance
}

TEST_CASE("a pilot's --time stretches past max_s to its longest trial where the window allows (the 70B weakness)") {
    // Trials longer than the 2 h cap: capped pilots could take only the short ones, so the
    // longest ran last, alone, and doubled the makespan.
    const std::vector<PendingTrial> ts = {trial("long", 3 * 3600), trial("short", 600)};
    const double longest = pilot_trial_limit(ts[0], PlanOptions{});
    PilotPlan p = plan_pilots(ts, std::vector<NodeWindow>{node("n1", 2)});
    REQUIRE(p.submit.size() == 2);
    for (const auto& x : p.submit) {
        CHECK(x.time_limit_s > PilotOptions{}.max_s);
        CHECK(x.time_limit_s >= longest);  // plus startup and staging
        REQUIRE(pilot_next(ts, "c1", 1, x.time_limit_s - (x.time_min_s - pilot_trial_limit(ts[1], PlanOptions{}))).has_value());
    }
    // A window still bounds it.
    p = plan_pilots(ts, std::vector<NodeWindow>{node("n1", 2, 5000)});
    for (const auto& x : p.submit) CHECK(x.time_limit_s <= 5000);
}

TEST_CASE("a pilot asks --time-min for the window it was planned into, since backfill grants exactly that") {
    PilotRequest r;
    r.time_min_s = 100;   // startup + the shortest trial
    r.time_limit_s = 900;
    // Nothing planned onto the node: --time-min is --time (the main scheduler grants --time anyway).
    PilotAsk a = pilot_ask(r, 3, 30);
    CHECK(a.time_limit_s == 960);   // 903 s -> 16 minutes
    CHECK(a.time_min_s == 960);
    // A reservation 300 s away: the whole minutes left after a backfill cycle.
    r.window_s = 300;
    a = pilot_ask(r, 3, 30);
    CHECK(a.time_min_s == 240);
    CHECK(a.time_limit_s == 960);
    // Never below what the pilot needs, never above --time.
    r.window_s = 90;
    CHECK(pilot_ask(r, 3, 30).time_min_s == 120);
    r.window_s = 5000;
    CHECK(pilot_ask(r, 3, 30).time_min_s == 960);
    // The planner hands it the node's window, less the staging the pilot waits for.
    const std::vector<PendingTrial> ts = {trial("a", 600)};
    const PilotPlan p = plan_pilots(ts, std::vector<NodeWindow>{node("n1", 1, 4000)});
    REQUIRE(p.submit.size() == 1);
    CHECK(p.submit[0].stages_checkpoint);
    CHECK(p.submit[0].window_s == doctest::Approx(4000 - 40));
}
