// Suite groups (evalsched-suite(5) GROUPS): an lm-eval group written as its leaf tasks is parsed
// into leaves that run like datasets, gets one CPU job that combines the leaves' scores, and
// that job's arithmetic is lm-eval's (the sample-size-weighted mean, or the plain mean).
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "evalsched/adapters/harness_files.hpp"
#include "evalsched/core/suite.hpp"
#include "evalsched/core/trials.hpp"

using namespace acme::evalsched;

namespace {

constexpr const char* kGroups = R"([suite]
command = "infer {checkpoint} {dataset} {shard} {num_shards} {samples} {output}"
bundle_command = "lm_eval {checkpoint} --tasks {datasets} --out {output}"
metric_command = "score {dataset} {output}"
group_metric_command = "combine {dataset} {leaves} {leaf_samples} {aggregate} {output}"
shard = true

[[dataset]]
name = "gsm8k"
kind = "generation"
samples = 1319

[[dataset]]
name = "mmlu_mini"
kind = "multiple_choice"
prior = "1h"
[dataset.leaves]
mmlu_a = 100
mmlu_b = 300
mmlu_c = 600

[[dataset]]
name = "evenly"
kind = "generation"
samples = 10
aggregate = "mean"
leaves = ["ev_a", "ev_b", "ev_c"]
)";

std::string refusal(const std::string& text) {
    try {
        parse_suite(text, "g.toml");
    } catch (const SuiteError& e) {
        return e.what();
    }
    return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

Checkpoint ckpt() { return Checkpoint{"run7/step-100", "/dev/shm/c", "/out/run7/step-100", ModelSpec{7, 14e9}}; }

const std::string kHead = "[suite]\ncommand='r {dataset}'\ngroup_metric_command='c {leaves}'\n[[dataset]]\nname='g'\nkind='generation'\n";

}  // namespace

TEST_CASE("a group's leaves stand in the suite's datasets in its place, with its settings and their own sample counts") {
    const Suite s = parse_suite(kGroups, "g.toml");
    std::vector<std::string> names;
    for (const auto& d : s.datasets) names.push_back(d.name);
    CHECK(names == std::vector<std::string>{"gsm8k", "mmlu_a", "mmlu_b", "mmlu_c", "ev_a", "ev_b", "ev_c"});
    CHECK(s.find("mmlu_mini") == nullptr);
    const Dataset* b = s.find("mmlu_b");
    REQUIRE(b);
    CHECK(b->group == "mmlu_mini");
    CHECK(b->kind == TaskKind::multiple_choice);
    CHECK(b->shard);
    CHECK(b->samples == 300);
    CHECK(b->metric_command == "score {dataset} {output}");
    // The group's prior is shared out in proportion to the leaves' samples: 3/10 of an hour.
    REQUIRE(b->prior_s);
    CHECK(*b->prior_s == doctest::Approx(1080));
    REQUIRE(s.groups.size() == 2);
    CHECK(s.groups[0].name == "mmlu_mini");
    CHECK(s.groups[0].samples == 1000);
    CHECK(s.groups[0].leaf_samples == std::vector<long>{100, 300, 600});
    CHECK(s.groups[0].aggregate == GroupAggregate::weight_by_size);
    // A list of names: the group's 10 samples split evenly, the remainder to the first leaf.
    CHECK(s.groups[1].aggregate == GroupAggregate::mean);
    CHECK(s.groups[1].leaf_samples == std::vector<long>{4, 3, 3});
    CHECK(s.find("ev_a")->samples == 4);
    CHECK(s.find("ev_c")->group == "evenly");
    CHECK(s.find("gsm8k")->group.empty());
}

TEST_CASE("group mistakes are refused with their line and what to write") {
    CHECK(contains(refusal(kHead + "leaves = []\n"), "g.toml:7: leaves of dataset \"g\" must list 1 to 1000 leaf tasks"));
    CHECK(contains(refusal(kHead + "leaves = [1]\n"), "g.toml:7: each leaf of dataset \"g\" is a task name in quotes"));
    CHECK(contains(refusal(kHead + "leaves = 'a'\n"), "g.toml:7: leaves of dataset \"g\" must be a list of task names or a table"));
    CHECK(contains(refusal(kHead + "leaves = ['a/b']\n"), "leaf \"a/b\" of dataset \"g\" must be 1-64 of"));
    CHECK(contains(refusal(kHead + "leaves = { a = 0 }\n"), "g.toml:7: leaf a of dataset \"g\": its value is its sample count"));
    CHECK(contains(refusal(kHead + "samples = 5\nleaves = { a = 1, b = 2 }\n"),
                   "g.toml:8: the leaves of dataset \"g\" hold 3 samples, but its samples = 5: correct one of them"));
    CHECK(contains(refusal(kHead + "samples = 1\nleaves = ['a', 'b']\n"), "dataset \"g\" has 1 samples for 2 leaves"));
    CHECK(contains(refusal(kHead + "aggregate = 'median'\nleaves = ['a']\n"), "g.toml:7: aggregate of dataset \"g\" is \"median\": use \"weight_by_size\""));
    CHECK(contains(refusal(kHead + "aggregate = 'mean'\n"), "aggregate in dataset \"g\" applies to a group only"));
    // A leaf is a task: it runs once per suite, whether listed as a dataset or as another group's leaf.
    CHECK(contains(refusal(kHead + "leaves = ['a', 'a']\n"), "g.toml:7: leaf \"a\" of dataset \"g\" is already defined at line 7"));
    CHECK(contains(refusal(kHead + "leaves = ['g']\n"), "leaf \"g\" of dataset \"g\" is already defined at line 4"));
    CHECK(contains(refusal(kHead + "leaves = ['a']\n[[dataset]]\nname='a'\nkind='generation'\n"), "g.toml:8: dataset \"a\" is already defined at line 7"));
    CHECK(contains(refusal("[suite]\ncommand='r {dataset}'\n[[dataset]]\nname='g'\nkind='generation'\nleaves=['a']\n"),
                   "g.toml:3: dataset \"g\" lists leaves but [suite] has no group_metric_command"));
    CHECK(contains(refusal("[suite]\ncommand='r'\ngroup_metric_command='c {output}'\n[[dataset]]\nname='g'\nkind='generation'\nleaves=['a']\n"),
                   "g.toml:3: group_metric_command in [suite] never mentions {leaves}"));
    CHECK(contains(refusal("[suite]\ncommand='r'\ngroup_metric_command='c {leaves} {checkpoint}'\n[[dataset]]\nname='a'\nkind='generation'\n"),
                   "unknown placeholder {checkpoint}"));
    CHECK(contains(refusal("[suite]\ncommand='r {samples}'\ngroup_metric_command='c {leaves}'\n[[dataset]]\nname='g'\nkind='generation'\nleaves=['a']\n"),
                   "mentions {samples} but its leaves' sizes are unknown"));
    CHECK(refusal("[suite]\ncommand='r {samples}'\ngroup_metric_command='c {leaves}'\n[[dataset]]\nname='g'\nkind='generation'\nleaves={a=3}\n").empty());
    CHECK(contains(refusal(kHead + "leaf = ['a']\n"), "unknown key \"leaf\" in dataset \"g\": remove it or use one of name,"));
}

TEST_CASE("leaves are scheduled like datasets: a long leaf is sharded, short ones bundled by leaf name") {
    const Suite s = parse_suite(kGroups, "g.toml");
    TrialOptions o;
    o.shard_above_s = 1200;
    o.bundle_below_s = 700;
    const TrialSet set = make_trials(s, ckpt(), PriorBook{}, o);
    std::map<std::string, int> pieces;
    const Trial* bundle = nullptr;
    for (const auto& t : set.trials) {
        for (const auto& p : t.parts) ++pieces[p.dataset];
        if (t.parts.size() > 1 && t.parts.front().dataset.starts_with("mmlu_")) bundle = &t;
    }
    // mmlu_c holds 0.6 h of the group's hour (+ preprocessing): two shards of it under 20 min.
    CHECK(pieces["mmlu_c"] == 2);
    const auto c0 = std::find_if(set.trials.begin(), set.trials.end(), [](const Trial& t) { return t.id == "run7/step-100/mmlu_c#0of2"; });
    REQUIRE(c0 != set.trials.end());
    CHECK(c0->command == "infer /dev/shm/c mmlu_c 0 2 600 /out/run7/step-100/mmlu_c/shard-0-of-2");
    REQUIRE(bundle);
    CHECK(contains(bundle->command, "--tasks mmlu_a,"));
    // Each leaf has its own metric job, as any dataset has; the group has its own, apart.
    std::set<std::string> metric_datasets;
    for (const auto& m : set.metrics) metric_datasets.insert(m.dataset);
    CHECK(metric_datasets.count("mmlu_b"));
    CHECK(!metric_datasets.count("mmlu_mini"));
}

TEST_CASE("each group gets one CPU job after every trial of its leaves, its command naming leaves, sizes and rule") {
    const Suite s = parse_suite(kGroups, "g.toml");
    TrialOptions o;
    o.shard_above_s = 1200;
    const TrialSet set = make_trials(s, ckpt(), PriorBook{}, o);
    REQUIRE(set.group_metrics.size() == 2);
    const MetricJob& g = set.group_metrics[0];
    CHECK(g.id == "run7/step-100/mmlu_mini:group");
    CHECK(g.dataset == "mmlu_mini");
    CHECK(g.command == "combine mmlu_mini mmlu_a,mmlu_b,mmlu_c 100,300,600 weight_by_size /out/run7/step-100/mmlu_mini");
    std::set<std::string> expected;
    for (const auto& t : set.trials)
        for (const auto& p : t.parts)
            if (p.dataset.starts_with("mmlu_")) expected.insert(t.id);
    CHECK(std::set<std::string>(g.after.begin(), g.after.end()) == expected);
    CHECK(g.after.size() == expected.size());  // a bundle of two leaves is waited for once
    CHECK(g.estimate_s > 0);
    CHECK(set.group_metrics[1].command == "combine evenly ev_a,ev_b,ev_c 4,3,3 mean /out/run7/step-100/evenly");
    // A suite without groups has none.
    CHECK(make_trials(parse_suite("[[dataset]]\nname='a'\nkind='judge'\ncommand='r'\n", "x.toml"), ckpt(), PriorBook{}).group_metrics.empty());
}

TEST_CASE("a group's score is the sample-weighted mean of its leaves (weight_by_size), or their plain mean") {
    using acme::adapters::group_scores;
    using acme::adapters::LeafScores;
    const std::vector<LeafScores> leaves{{"a", {{"acc", 0.5}, {"acc_norm", 0.6}}, 100},
                                         {"b", {{"acc", 0.7}, {"acc_norm", 0.8}}, 300},
                                         {"c", {{"acc", 0.9}}, 600}};
    std::vector<std::string> dropped;
    const auto w = group_scores(leaves, true, &dropped);
    // By hand: (0.5*100 + 0.7*300 + 0.9*600) / 1000 = (50 + 210 + 540) / 1000 = 0.8.
    CHECK(w.at("acc") == doctest::Approx(0.8));
    CHECK(w.count("acc_norm") == 0);  // c does not report it: no group score from two of three leaves
    CHECK(dropped == std::vector<std::string>{"acc_norm (not in every leaf)"});
    // Plain mean: (0.5 + 0.7 + 0.9) / 3 = 0.7.
    CHECK(group_scores(leaves, false).at("acc") == doctest::Approx(0.7));
    CHECK_THROWS_WITH_AS(group_scores({{"a", {{"acc", 1}}, 0}}, true), doctest::Contains("leaf a has no sample count"), acme::adapters::AdapterError);
    CHECK(group_scores({{"a", {{"acc", 1}}, 0}}, false).at("acc") == 1);
    CHECK_THROWS_AS(group_scores({}, true), acme::adapters::AdapterError);
    CHECK_THROWS_WITH_AS(group_scores({{"a", {{"x", 1}}, 1}, {"b", {{"y", 1}}, 1}}, true), doctest::Contains("share no metric"), acme::adapters::AdapterError);
}
