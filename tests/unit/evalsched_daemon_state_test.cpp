#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "common/store/evalsched_store.hpp"
#include "evalsched/daemon/state.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme::evalsched;

namespace {

const char* kSuite =
    "[suite]\nname = \"t\"\ncommand = \"eval {checkpoint} {dataset} {output}\"\n"
    "[[dataset]]\nname = \"mmlu\"\nkind = \"multiple_choice\"\nsamples = 100\n[[dataset]]\nname = \"gsm8k\"\nkind = \"generation\"\nsamples = 50\n";

std::int64_t submit_as(acme::store::Database& db, const Caller& c) {
    const auto req = parse_submit(nlohmann::json{{"checkpoint", "/ckpt/run7/step-100"}, {"suite", kSuite}}.dump());
    return create_evaluation(
        db, req, c, "/results",
        [&](const std::string& out) {
            Checkpoint ck{"run7/step-100", "\"$S\"", out, ModelSpec{}};
            return make_trials(req.suite, ck, PriorBook{});
        },
        1000);
}

}  // namespace

TEST_CASE("users see and cancel only their own evaluations; admins see all") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const Caller alice{1001, 1001, "alice", false}, bob{1002, 1002, "bob", false}, admin{0, 0, "root", true};
    const auto id = submit_as(db, alice);
    CHECK(evaluation_json(db, id, alice));
    CHECK_FALSE(evaluation_json(db, id, bob));
    CHECK(evaluation_json(db, id, admin));
    CHECK(list_json(db, bob).empty());
    CHECK(list_json(db, admin).size() == 1);
    CHECK(cancel_evaluation(db, id, bob, 1001) == CancelResult::not_found);
    CHECK(cancel_evaluation(db, id, alice, 1001) == CancelResult::cancelled);
    CHECK(cancel_evaluation(db, id, alice, 1002) == CancelResult::already_finished);
}

TEST_CASE("an attempt lost between marking and submitting is forgotten, and the trial is pending again") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const auto id = submit_as(db, Caller{1001, 1001, "alice", false});
    auto pending = trials_in_state(db, {"pending"});
    REQUIRE(pending.size() == 2);
    CHECK(pending[0].command.find("/results/" + std::to_string(id) + "/") != std::string::npos);
    const AttemptRow a = begin_attempt(db, pending[0], "n1", 300, 1000);
    CHECK(a.tag == attempt_tag(instance_id(db), id, pending[0].id, 1));
    CHECK(instance_id(db).size() == 8);
    CHECK(open_attempts(db).size() == 1);
    attempt_never_submitted(db, a, "");
    CHECK(open_attempts(db).empty());
    CHECK(trials_in_state(db, {"pending"}).size() == 2);
    CHECK(load_trial(db, pending[0].id)->attempts == 0);
}

TEST_CASE("finished trials store scores and priors; an infrastructure failure retries without the node") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const Caller alice{1001, 1001, "alice", false};
    const auto id = submit_as(db, alice);
    auto pending = trials_in_state(db, {"pending"});
    auto a = begin_attempt(db, pending[0], "n1", 300, 1000);
    attempt_submitted(db, a, 42, std::nullopt);
    Outcome fail;
    fail.node = "n1";
    fail.category = "infrastructure";
    fail.reason = "gpu_ecc";
    fail.retry = true;
    fail.exclude_node = "n1";
    finish_attempt(db, a, fail, "7b", 1010);
    auto t = load_trial(db, pending[0].id);
    CHECK(t->state == "pending");
    CHECK(t->excluded_nodes == "n1");
    a = begin_attempt(db, *t, "n2", 300, 1020);
    CHECK(a.number == 2);
    attempt_submitted(db, a, 43, std::nullopt);
    Outcome ok;
    ok.success = true;
    ok.node = "n2";
    ok.scores = {{t->datasets, "accuracy", 0.5}};
    ok.run_s = 30;
    ok.stage = Outcome::Stage{true, 1000, 1};
    finish_attempt(db, a, ok, "7b", 1050);
    CHECK(load_trial(db, pending[0].id)->state == "done");
    const auto report = report_json(db, "run7", alice);
    REQUIRE(report);
    CHECK((*report)["checkpoints"].size() == 1);
    CHECK(acme::store::recent_prior_runs(db).size() == 1);
    CHECK((*evaluation_json(db, id, alice))["shared_bytes_read"] == 1000);
}

TEST_CASE("the list counts every evaluation's trials and stagings apart, as showing each one does") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const Caller alice{1001, 1001, "alice", false}, bob{1002, 1002, "bob", false}, admin{0, 0, "root", true};
    const auto first = submit_as(db, alice);
    const auto second = submit_as(db, bob);
    const auto third = submit_as(db, alice);
    // first: one trial done with a copy, one running; second: cancelled; third: untouched.
    auto pending = trials_in_state(db, {"pending"});
    REQUIRE(pending.size() == 6);
    auto a = begin_attempt(db, pending[0], "n1", 300, 1000);
    attempt_submitted(db, a, 42, std::nullopt);
    Outcome ok;
    ok.success = true;
    ok.node = "n1";
    ok.scores = {{pending[0].datasets, "accuracy", 0.5}};
    ok.stage = Outcome::Stage{true, 1000, 1};
    finish_attempt(db, a, ok, "7b", 1050);
    auto b = begin_attempt(db, pending[1], "n2", 300, 1060);
    attempt_submitted(db, b, 43, std::nullopt);
    attempt_running(db, b, "n2");
    CHECK(cancel_evaluation(db, second, bob, 1070) == CancelResult::cancelled);

    const auto all = list_json(db, admin);
    REQUIRE(all.size() == 3);
    for (const auto& e : all) {
        auto shown = *evaluation_json(db, e["id"].get<std::int64_t>(), admin);
        shown.erase("trial_list");
        CHECK(e == shown);
    }
    CHECK(all[0]["id"] == first);
    CHECK(all[0]["trials"]["done"] == 1);
    CHECK(all[0]["trials"]["running"] == 1);
    CHECK(all[0]["trials"]["pending"] == 0);
    CHECK(all[0]["running_gpus"] == pending[1].gpus);
    CHECK(all[0]["remaining_gpu_s"] == doctest::Approx(pending[1].gpus * (pending[1].startup_s + pending[1].median_s)));
    CHECK(all[0]["shared_bytes_read"] == 1000);
    CHECK(all[0]["copies"] == 1);
    CHECK(all[1]["trials"]["cancelled"] == 2);
    CHECK(all[1]["remaining_gpu_s"] == 0);
    CHECK(all[2]["trials"]["pending"] == 2);
    CHECK(all[2]["copies"] == 0);
    const auto mine = list_json(db, alice);
    REQUIRE(mine.size() == 2);
    CHECK(mine[0]["id"] == first);
    CHECK(mine[1]["id"] == third);
}

TEST_CASE("the priors cache answers what priors_json does and rereads only when a prior run is added or pruned") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    PriorsCache cache;
    CHECK(cache.get(db, "").empty());
    acme::store::record_prior_run(db, {"mmlu", "7b", 1, 100, 1, "run7/a", "n1", 10});
    acme::store::record_prior_run(db, {"gsm8k", "7b", 1, 50, 1, "run7/a", "n1", 11});
    CHECK(cache.get(db, "") == priors_json(db, ""));
    CHECK(cache.rebuilds() == 2);
    CHECK(cache.get(db, "gsm8k") == priors_json(db, "gsm8k"));
    CHECK(cache.get(db, "nope") == priors_json(db, "nope"));
    CHECK(cache.rebuilds() == 2);
    // A state change without a prior run keeps the cache.
    submit_as(db, Caller{1001, 1001, "alice", false});
    cache.get(db, "");
    CHECK(cache.rebuilds() == 2);
    for (int i = 0; i < 3; ++i) acme::store::record_prior_run(db, {"mmlu", "7b", 1, 200.0 + i, 1, "run7/b", "n1", 20.0 + i});
    CHECK(cache.get(db, "mmlu") == priors_json(db, "mmlu"));
    CHECK(cache.rebuilds() == 3);
    CHECK(acme::store::prune_prior_runs(db, 1) == 3);
    CHECK(cache.get(db, "") == priors_json(db, ""));
    CHECK(cache.rebuilds() == 4);
}
