// The time-split evaluation's promises: a split trains only on the cases that existed before its
// batch, asks the model only about the rows no rule decided (not a job that exited 0), finds a
// case that moved to another reason's directory since, its threshold comes from the trials it is
// given, and its score changes a record's verdict only where the fallback answered.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "common/diagnose/time_split.hpp"

using namespace acme::diagnose;

namespace {

corpus::Case make_case(const std::string& reason, const std::string& file, const std::string& batch, const std::string& text) {
    corpus::Case c;
    c.log = "tests/data/diagnosis/" + reason + "/" + file;
    c.expected = reason;
    c.batch = batch;
    c.text = text;
    c.source = "https://github.com/owner/" + file;
    return c;
}

// Two families no shipped rule names, a few cases each before batch 02, and batch 02's cases.
std::vector<corpus::Case> cases() {
    std::vector<corpus::Case> out;
    for (int i = 0; i < 6; ++i) {
        std::string n = std::to_string(i);
        std::string batch = i < 3 ? "" : "01";
        out.push_back(make_case("node_failure", "lost" + n + ".log", batch,
                                "step " + n + "\nflux broker lost contact with peer fabric lane " + n + "\nabort: broker peer lost\n"));
        out.push_back(make_case("value_error", "tmpl" + n + ".log", batch,
                                "step " + n + "\nthe tokenizer rejected sample " + n + ": malformed template field\nabort: template field malformed\n"));
    }
    out.push_back(make_case("node_failure", "b2_lost.log", "02", "flux broker lost contact with peer fabric lane 9\nabort: broker peer lost\n"));
    // Relabelled since its record: recorded as value_error, now under key_error.
    out.push_back(make_case("key_error", "b2_moved.log", "02", "the tokenizer rejected sample 4: malformed template field\n"));
    out.push_back(make_case("value_error", "b2_clean.log", "02", "the tokenizer rejected sample 5: malformed template field\n"));
    out.push_back(make_case("value_error", "b2_ruled.log", "02", "ValueError: malformed template field\n"));
    out.push_back(make_case("value_error", "b3_later.log", "03", "flux broker lost contact with peer fabric lane 9\n"));
    return out;
}

constexpr const char* kRecord =
    "# batch\t02\n# commit\tabc\n"
    "case\texpected\tgot\texpected_category\tgot_category\trule\tevidence\n"
    "node_failure/b2_lost.log\tnode_failure\tunknown\tinfrastructure\tunknown\t-\tabort: broker peer lost\n"
    "value_error/b2_moved.log\tvalue_error\tunknown\tframework\tunknown\t-\tmalformed template field\n"
    "value_error/b2_clean.log\tvalue_error\tunknown\tframework\tunknown\t-\tthe job exited 0: nothing to diagnose\n"
    "value_error/b2_ruled.log\tvalue_error\tvalue_error\tframework\tframework\tfw.value\tValueError: malformed\n";

}  // namespace

TEST_CASE("a time split trains on what existed before its batch and asks only about the rows no rule decided") {
    auto all = cases();
    CHECK(corpus::examples_before(all, "02").size() == 12);  // no batch, and batch 01
    CHECK(corpus::examples_before(all, "01").size() == 6);
    CHECK(corpus::examples_before(all, "").size() == all.size());

    auto record = corpus::parse_first_sight(kRecord, "batch-02.tsv");
    auto splits = corpus::time_splits(all, {record});
    REQUIRE(splits.size() == 1);
    CHECK(splits[0].batch == "02");
    CHECK(splits[0].trained_on == 12);
    REQUIRE(splits[0].trials.size() == 2);  // not the job that exited 0, not the row a rule decided
    CHECK(splits[0].trials[0].where == "node_failure/b2_lost.log");
    CHECK(splits[0].trials[0].best == "node_failure");
    CHECK(splits[0].trials[1].where == "value_error/b2_moved.log");
    CHECK(splits[0].trials[1].expected == "value_error");  // as recorded
    CHECK(splits[0].trials[1].best == "value_error");

    // The fallback answers where it clears the threshold; the rest of the record stands.
    auto s = corpus::score_split(record, splits[0], 0.0);
    CHECK(s.answered == 2);
    CHECK(s.right == 2);
    CHECK(s.without.total == 4);
    CHECK(s.without.reason_right == 1);
    CHECK(s.with.reason_right == 3);
    CHECK(s.with.infrastructure_recall() == 1.0);
    auto none = corpus::score_split(record, splits[0], 1.01);
    CHECK(none.answered == 0);
    CHECK(none.with.reason_right == none.without.reason_right);

    auto missing = corpus::parse_first_sight(std::string(kRecord) + "value_error/gone.log\tvalue_error\tunknown\tframework\tunknown\t-\tx\n",
                                             "batch-02.tsv");
    CHECK_THROWS_AS(corpus::time_splits(all, {missing}), std::runtime_error);
}

TEST_CASE("the calibrated threshold is the lowest whose answers are right often enough, from the trials given") {
    std::vector<corpus::FallbackTrial> trials;
    CHECK(corpus::calibrated_threshold(trials, 0.8) == 1.0);  // nothing to calibrate on: never answer
    for (int i = 0; i < 9; ++i) trials.push_back({"01", "r" + std::to_string(i), "key_error", "key_error", 0.95});
    for (int i = 0; i < 5; ++i) trials.push_back({"01", "w" + std::to_string(i), "key_error", "value_error", 0.5});
    trials.push_back({"01", "u", "key_error", "unknown", 0.99});  // "unknown" is no answer
    // At 0.50 and below: 9 of 14 right, (9+1)/(14+2) < 0.8; above 0.50: (9+1)/(9+2) >= 0.8.
    CHECK(corpus::calibrated_threshold(trials, 0.8) == doctest::Approx(0.55));
    CHECK(corpus::calibrated_threshold(trials, 0.95) == 1.0);
    // Three lucky answers do not make a calibration: (3+1)/(3+2) = 0.8 < 0.9.
    std::vector<corpus::FallbackTrial> few(3, {"01", "x", "key_error", "key_error", 0.99});
    CHECK(corpus::calibrated_threshold(few, 0.9) == 1.0);
}

TEST_CASE("the trainer's threshold is the calibration over every record's trials, and 1.0 without records") {
    auto all = cases();
    CHECK(corpus::trained_threshold(all, {}) == 1.0);
    CHECK(corpus::read_first_sights("/nonexistent/first-sight").empty());
    auto record = corpus::parse_first_sight(kRecord, "batch-02.tsv");
    std::vector<corpus::FallbackTrial> trials;
    for (const auto& split : corpus::time_splits(all, {record}))
        trials.insert(trials.end(), split.trials.begin(), split.trials.end());
    CHECK(trials.size() == 2);
    CHECK(corpus::trained_threshold(all, {record}) == corpus::calibrated_threshold(trials, corpus::kFallbackPrecision));
}

TEST_CASE("a row the shipped fallback answered in a record is a no-rule row: a trial, and unknown for the rules alone") {
    auto all = cases();
    // Records from batch 19 on are written with the fallback that shipped before the batch.
    std::string text = kRecord;
    auto at = text.find("node_failure/b2_lost.log\tnode_failure\tunknown\tinfrastructure\tunknown\t-\t");
    REQUIRE(at != std::string::npos);
    text.replace(at, std::string("node_failure/b2_lost.log\tnode_failure\tunknown\tinfrastructure\tunknown\t-\t").size(),
                 "node_failure/b2_lost.log\tnode_failure\tnode_failure\tinfrastructure\tinfrastructure\tfallback\t");
    auto record = corpus::parse_first_sight(text, "batch-02.tsv");
    CHECK(record.score.reason_right == 2);  // the record's figure is the engine's, fallback included
    auto splits = corpus::time_splits(all, {record});
    REQUIRE(splits.size() == 1);
    CHECK(splits[0].trials.size() == 2);
    auto s = corpus::score_split(record, splits[0], 1.01);
    CHECK(s.without.reason_right == 1);  // the rules alone left it unknown
}
