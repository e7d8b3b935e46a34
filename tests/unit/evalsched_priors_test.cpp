#include <doctest/doctest.h>

#include "evalsched/core/priors.hpp"

using namespace acme::evalsched;

namespace {
Dataset dataset(const char* name, TaskKind kind, std::optional<long> samples, std::optional<double> prior = std::nullopt) {
    Dataset d;
    d.name = name;
    d.kind = kind;
    d.command = "x";
    d.samples = samples;
    d.prior_s = prior;
    return d;
}
}  // namespace

TEST_CASE("with no history a dataset's prior comes from samples x per-sample cost of its kind") {
    PriorBook book;
    const auto gen = book.run_estimate(dataset("gsm8k", TaskKind::generation, 1319), ModelSpec{7, 14e9}, 1);
    const auto mc = book.run_estimate(dataset("copa", TaskKind::multiple_choice, 1319), ModelSpec{7, 14e9}, 1);
    CHECK(gen.source == PriorSource::samples);
    CHECK(gen.median_s > mc.median_s);
    CHECK(gen.p90_s > gen.median_s);
    // Twice the parameters, about twice the time; two GPUs, about half.
    const auto big = book.run_estimate(dataset("gsm8k", TaskKind::generation, 1319), ModelSpec{14, 28e9}, 1);
    CHECK(big.median_s == doctest::Approx(2 * gen.median_s));
    const auto two = book.run_estimate(dataset("gsm8k", TaskKind::generation, 1319), ModelSpec{7, 14e9}, 2);
    CHECK(two.median_s < gen.median_s * 0.6);
}

TEST_CASE("a suite prior beats the sample-count guess") {
    PriorBook book;
    const auto e = book.run_estimate(dataset("triviaqa", TaskKind::generation, 17944, 2700), ModelSpec{}, 1);
    CHECK(e.source == PriorSource::suite);
    CHECK(e.median_s == doctest::Approx(2700));
}

TEST_CASE("an unknown dataset gets a conservative estimate and is marked as such") {
    PriorBook book;
    const auto e = book.run_estimate(dataset("mystery", TaskKind::generation, std::nullopt), ModelSpec{}, 1);
    CHECK(e.conservative());
    CHECK(e.median_s >= 3600);
    CHECK_FALSE(book.run_estimate(dataset("gsm8k", TaskKind::generation, 1319), ModelSpec{}, 1).conservative());
}

TEST_CASE("learned priors are the median and p90 of recent runs, robust to one outlier") {
    PriorBook book;
    const RunKey key{"gsm8k", "7b", 1};
    for (double s : {600, 610, 590, 605, 595, 600, 602, 598, 3000, 601}) book.add_run(key, s);
    const auto e = book.run_estimate(dataset("gsm8k", TaskKind::generation, 1319), ModelSpec{7, 14e9}, 1);
    CHECK(e.source == PriorSource::history);
    CHECK(e.runs == 10);
    CHECK(e.median_s == doctest::Approx(600.5));
    CHECK(e.p90_s == doctest::Approx(610));  // nearest-rank p90 of 10 runs: the 9th value
}

TEST_CASE("the window forgets old runs, so priors follow a model that got slower") {
    PriorBook book(CostModel{}, 5);
    const RunKey key{"math", "7b", 1};
    for (int i = 0; i < 5; ++i) book.add_run(key, 100);
    for (int i = 0; i < 5; ++i) book.add_run(key, 200);
    CHECK(book.runs(key) == 5);
    CHECK(book.run_estimate(dataset("math", TaskKind::generation, 5000), ModelSpec{7, 14e9}, 1).median_s == 200);
}

TEST_CASE("a shard's run counts as its whole-dataset equivalent") {
    PriorBook book;
    book.add_run({"math", "7b", 1}, 300, 0.25);
    const auto e = book.run_estimate(dataset("math", TaskKind::generation, 5000), ModelSpec{7, 14e9}, 1);
    CHECK(e.median_s == doctest::Approx(1200));
    CHECK(e.p90_s >= 1200 * 1.25);  // one run: widened
}

TEST_CASE("history is per size class: a 70B run does not predict a 7B run") {
    PriorBook book;
    book.add_run({"gsm8k", "70b", 1}, 9000);
    const auto e = book.run_estimate(dataset("gsm8k", TaskKind::generation, 1319), ModelSpec{7, 14e9}, 1);
    CHECK(e.source == PriorSource::samples);
    CHECK(size_class(6.7) == size_class(7));
    CHECK(size_class(13) != size_class(7));
}

TEST_CASE("history at another GPU count is rescaled rather than ignored") {
    PriorBook book;
    book.add_run({"gsm8k", "7b", 1}, 1000);
    const auto e = book.run_estimate(dataset("gsm8k", TaskKind::generation, 1319), ModelSpec{7, 14e9}, 2);
    CHECK(e.source == PriorSource::history);
    CHECK(e.median_s == doctest::Approx(1000 / (2 * 0.9)));
}

TEST_CASE("staging time follows each node's measured bandwidth") {
    PriorBook book;
    CHECK(book.stage_seconds("n1", 25e9 / 8) == doctest::Approx(1.0));  // default: a 25 Gb/s NIC
    book.add_stage("n2", 10e9, 20);
    CHECK(book.stage_seconds("n2", 10e9) == doctest::Approx(20));
    CHECK(book.stage_seconds("n1", 10e9) == doctest::Approx(10e9 / (25e9 / 8)));
}

TEST_CASE("a trial's startup is the cost model's guess until one is measured, then the learned median") {
    PriorBook book;
    const ModelSpec m7{7, 14e9};
    CHECK(book.startup_seconds(m7, 1) == doctest::Approx(book.cost_model().trial_startup_seconds(14e9)));
    // One slow load on a busy node does not move the median.
    for (double s : {4.6, 4.8, 4.7, 30.0, 4.9}) book.add_startup("7b", 1, s);
    CHECK(book.startup_seconds(m7, 1) == doctest::Approx(4.8));
    CHECK(book.startups("7b", 1) == 5);
    // Nonsense is not learned.
    book.add_startup("7b", 1, 0);
    book.add_startup("7b", 1, -3);
    book.add_startup("7b", 0, 5);
    CHECK(book.startups("7b", 1) == 5);
}

TEST_CASE("startup is learned per size class, and shared across GPU counts of one class until measured at that count") {
    PriorBook book;
    book.add_startup("7b", 1, 5);
    book.add_startup("7b", 1, 7);
    // Another GPU count of the class: its pooled median, not the 25 s guess.
    CHECK(book.startup_seconds(ModelSpec{7, 14e9}, 4) == doctest::Approx(6));
    book.add_startup("7b", 4, 9);
    CHECK(book.startup_seconds(ModelSpec{7, 14e9}, 4) == doctest::Approx(9));
    // A 70B model learns nothing from 7B loads.
    CHECK(book.startup_seconds(ModelSpec{70, 140e9}, 1) == doctest::Approx(book.cost_model().trial_startup_seconds(140e9)));
}

TEST_CASE("the startup window forgets old loads, so it follows a harness that got faster") {
    PriorBook book(CostModel{}, 3);
    for (double s : {40.0, 40.0, 40.0, 5.0, 5.0, 5.0}) book.add_startup("7b", 1, s);
    CHECK(book.startups("7b", 1) == 3);
    CHECK(book.startup_seconds(ModelSpec{7, 14e9}, 1) == doctest::Approx(5));
}
