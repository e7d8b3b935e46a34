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
