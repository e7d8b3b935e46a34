#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "evalsched/core/trials.hpp"
#include "evalsched/sim/durations.hpp"

using namespace acme::evalsched;

namespace {

constexpr const char* kSuite = R"(
[suite]
command = "infer {checkpoint} {dataset} {shard} {num_shards} {output}"
bundle_command = "lm_eval {checkpoint} --tasks {datasets} --out {output}"
metric_command = "score {dataset} {output}"
shard = true

[[dataset]]
name = "long"
kind = "generation"
prior = "2h"

[[dataset]]
name = "long_unsplittable"
kind = "judge"
prior = "2h"
shard = false
command = "judge {checkpoint} {output}"

[[dataset]]
name = "tiny_a"
kind = "multiple_choice"
samples = 100

[[dataset]]
name = "tiny_b"
kind = "multiple_choice"
samples = 56

[[dataset]]
name = "medium"
kind = "multiple_choice"
samples = 10000
)";

Checkpoint ckpt() { return Checkpoint{"run7/step-100", "/dev/shm/evalsched/run7-step-100", "/out/run7/step-100", ModelSpec{7, 14e9}}; }

}  // namespace

TEST_CASE("a long shardable dataset is split into shards that cover it exactly once") {
    const Suite s = parse_suite(kSuite, "t.toml");
    TrialOptions o;
    o.shard_above_s = 1800;
    const TrialSet set = make_trials(s, ckpt(), PriorBook{}, o);
    std::vector<const Trial*> shards;
    for (const auto& t : set.trials)
        if (t.parts.front().dataset == "long") shards.push_back(&t);
    REQUIRE(shards.size() == 5);  // (2h + preprocessing) / 30 min, rounded up
    std::set<int> seen;
    for (const auto* t : shards) {
        CHECK(t->parts.size() == 1);
        CHECK(t->parts[0].num_shards == 5);
        seen.insert(t->parts[0].shard);
        CHECK(t->prior.median_s < 1800);
    }
    CHECK(seen == std::set<int>{0, 1, 2, 3, 4});
    CHECK(shards[2]->command == "infer /dev/shm/evalsched/run7-step-100 long 2 5 /out/run7/step-100/long/shard-2-of-5");
    CHECK(shards[2]->id == "run7/step-100/long#2of5");
}

TEST_CASE("a dataset that may not be sharded stays one trial however long") {
    const TrialSet set = make_trials(parse_suite(kSuite, "t.toml"), ckpt(), PriorBook{}, TrialOptions{});
    auto n = std::count_if(set.trials.begin(), set.trials.end(), [](const Trial& t) { return t.parts.front().dataset == "long_unsplittable"; });
    CHECK(n == 1);
}

TEST_CASE("datasets too short to pay for a model load are bundled into one trial") {
    const TrialSet set = make_trials(parse_suite(kSuite, "t.toml"), ckpt(), PriorBook{}, TrialOptions{});
    const Trial* bundle = nullptr;
    for (const auto& t : set.trials)
        if (t.parts.size() > 1) bundle = &t;
    REQUIRE(bundle);
    std::set<std::string> names;
    for (const auto& p : bundle->parts) names.insert(p.dataset);
    CHECK(names == std::set<std::string>{"tiny_a", "tiny_b"});
    CHECK(bundle->command == "lm_eval /dev/shm/evalsched/run7-step-100 --tasks tiny_a,tiny_b --out /out/run7/step-100");
    // medium (10k multiple-choice samples, ~10 min) is worth its own load.
    CHECK(std::any_of(set.trials.begin(), set.trials.end(), [](const Trial& t) { return t.id == "run7/step-100/medium"; }));
}

TEST_CASE("without a bundle_command nothing is bundled") {
    Suite s = parse_suite(kSuite, "t.toml");
    s.bundle_command.reset();
    const TrialSet set = make_trials(s, ckpt(), PriorBook{}, TrialOptions{});
    for (const auto& t : set.trials) CHECK(t.parts.size() == 1);
}

TEST_CASE("every dataset gets one metric job, after every trial that holds a piece of it") {
    const TrialSet set = make_trials(parse_suite(kSuite, "t.toml"), ckpt(), PriorBook{}, TrialOptions{});
    REQUIRE(set.metrics.size() == 5);
    std::map<std::string, const MetricJob*> by;
    for (const auto& m : set.metrics) by[m.dataset] = &m;
    CHECK(by["long"]->after.size() == 5);
    CHECK(by["tiny_a"]->after.size() == 1);
    CHECK(by["tiny_a"]->after == by["tiny_b"]->after);
    CHECK(by["long"]->command == "score long /out/run7/step-100/long");
    CHECK(by["long"]->id == "run7/step-100/long:metric");
    // Each trial knows the metric work it unlocks (the planner starts long-scoring trials early).
    for (const auto& t : set.trials) CHECK(t.metric_s > 0);
}

TEST_CASE("each trial knows its checkpoint, GPUs, prior and startup") {
    const TrialSet set = make_trials(parse_suite(kSuite, "t.toml"), ckpt(), PriorBook{}, TrialOptions{});
    for (const auto& t : set.trials) {
        CHECK(t.checkpoint == "run7/step-100");
        CHECK(t.gpus == 1);
        CHECK(t.prior.median_s > 0);
        CHECK(t.prior.p90_s >= t.prior.median_s);
        CHECK(t.startup_s > 25);  // framework init plus 14 GB over PCIe
    }
}

TEST_CASE("options_for sizes shards to the cluster: more GPUs, smaller shards") {
    const Suite s = parse_suite(kSuite, "t.toml");
    const PriorBook priors;
    const auto small = options_for(s, priors, ModelSpec{}, 8);
    const auto big = options_for(s, priors, ModelSpec{}, 128);
    CHECK(big.shard_above_s < small.shard_above_s);
    CHECK(big.shard_above_s >= 10 * priors.cost_model().trial_startup_seconds(14e9) - 1e-9);
}

TEST_CASE("re-sharding a waiting shard: i of n becomes factor*i .. factor*i+factor-1 of factor*n, same samples") {
    const Suite s = parse_suite(kSuite, "t.toml");
    TrialOptions o;
    o.shard_above_s = 1800;
    const TrialSet set = make_trials(s, ckpt(), PriorBook{}, o);
    const Trial& shard2 = *std::find_if(set.trials.begin(), set.trials.end(), [](const Trial& t) { return t.id == "run7/step-100/long#2of5"; });
    const auto pieces = split_trial(shard2, s, ckpt(), 2);
    REQUIRE(pieces.size() == 2);
    CHECK(pieces[0].id == "run7/step-100/long#4of10");
    CHECK(pieces[1].id == "run7/step-100/long#5of10");
    CHECK(pieces[1].command == "infer /dev/shm/evalsched/run7-step-100 long 5 10 /out/run7/step-100/long/shard-5-of-10");
    // With shard i of n = samples floor(i*N/n) .. floor((i+1)*N/n), the pieces tile the shard.
    for (long n_samples : {7L, 1000L, 12345L}) {
        auto lo = [&](int i, int n) { return i * n_samples / n; };
        CHECK(lo(4, 10) == lo(2, 5));
        CHECK(lo(6, 10) == lo(3, 5));
    }
    CHECK(pieces[0].prior.median_s == doctest::Approx(shard2.prior.median_s / 2));
    CHECK(pieces[0].prior.p90_s == doctest::Approx(shard2.prior.p90_s / 2));
    CHECK(pieces[0].gpus == shard2.gpus);
    CHECK(pieces[0].checkpoint == shard2.checkpoint);
}

TEST_CASE("a trial that cannot be re-sharded comes back whole") {
    const Suite s = parse_suite(kSuite, "t.toml");
    const TrialSet set = make_trials(s, ckpt(), PriorBook{}, TrialOptions{});
    for (const auto& t : set.trials) {
        const bool unsplittable = t.parts.size() > 1 || t.parts.front().dataset == "long_unsplittable";
        if (unsplittable) CHECK(split_trial(t, s, ckpt(), 4).size() == 1);
        CHECK(split_trial(t, s, ckpt(), 1).size() == 1);
    }
    // Never more pieces than samples.
    const Trial& tiny = *std::find_if(set.trials.begin(), set.trials.end(), [](const Trial& t) { return t.parts.size() == 1 && t.parts[0].dataset == "medium"; });
    CHECK(split_trial(tiny, s, ckpt(), 16384).size() == 1);
}

TEST_CASE("a submission's trials use the fixed options until the cluster's GPUs are known, then options sized to them") {
    const Suite s = parse_suite(kSuite, "t.toml");
    const PriorBook priors;
    auto ids = [](const TrialSet& set) {
        std::vector<std::string> out;
        for (const auto& t : set.trials) out.push_back(t.id);
        return out;
    };
    CHECK(ids(trials_for_submission(s, ckpt(), priors, 0)) == ids(make_trials(s, ckpt(), priors, TrialOptions{})));
    const auto sized = trials_for_submission(s, ckpt(), priors, 64);
    CHECK(ids(sized) == ids(make_trials(s, ckpt(), priors, options_for(s, priors, ckpt().model, 64))));
    // 64 GPUs share 2h datasets finely: the long one is cut into more shards than the defaults' 4.
    auto shards_of_long = [](const TrialSet& set) {
        return std::count_if(set.trials.begin(), set.trials.end(), [](const Trial& t) { return t.parts.front().dataset == "long"; });
    };
    CHECK(shards_of_long(sized) > shards_of_long(trials_for_submission(s, ckpt(), priors, 0)));
    CHECK_THROWS_WITH_AS(trials_for_submission(s, ckpt(), priors, -1), doctest::Contains("is negative"), std::invalid_argument);
}

namespace {
std::string source_dir() {
    const char* srcdir = std::getenv("srcdir");  // set by automake's test harness
    return srcdir && *srcdir ? srcdir : ".";
}
}  // namespace

TEST_CASE("the cluster bench's second evaluation: with a learned 5 s startup every dataset gets its own trial, none is bundled") {
    // tests/bench/evalsched-cluster: core7b20 on 3 nodes x 4 GPUs; its first evaluation ran one
    // trial per dataset and taught each dataset's inference and each trial's startup (fake-eval
    // loads 64 MiB at 14.3 MB/s: 4.7 s, plus the harness's own start).
    const Suite suite = load_suite(source_dir() + "/tests/data/suites/core7b20.toml");
    const auto durations = acme::evalsched::sim::load_durations(source_dir() + "/tests/data/suites/core7b20.durations", suite);
    const Checkpoint ck{"run7/step-2", "/dev/shm/e", "/out", ModelSpec{7, 64.0 * 1048576}};
    PriorBook learned;
    for (const auto& [name, seconds] : durations) learned.add_run({name, size_class(7), 1}, seconds);
    PriorBook cold = learned;
    for (int i = 0; i < 20; ++i) learned.add_startup(size_class(7), 1, 4.9 + 0.02 * i);

    auto bundled = [](const TrialSet& set) {
        return std::count_if(set.trials.begin(), set.trials.end(), [](const Trial& t) { return t.parts.size() > 1; });
    };
    const TrialSet set = trials_for_submission(suite, ck, learned, 12);
    CHECK(bundled(set) == 0);
    std::set<std::string> covered;
    for (const auto& t : set.trials) {
        covered.insert(t.parts.front().dataset);
        CHECK(t.startup_s == doctest::Approx(5.09).epsilon(0.01));  // the learned median, not 25 s
    }
    CHECK(covered.size() == suite.datasets.size());
    CHECK(set.trials.size() >= suite.datasets.size());
    // The same run-time priors with the cost model's 25 s startup bundle the suite (issue 18:
    // 6 bundles of ~98 s on 6 of the 12 GPUs).
    const TrialSet guessed = trials_for_submission(suite, ck, cold, 12);
    CHECK(bundled(guessed) > 0);
    CHECK(guessed.trials.size() < suite.datasets.size());
}
