// Precursor stage jobs' rows (store v11, evalsched/store/stage_jobs.hpp): the transitions the
// scheduler makes and what a trial placed on a node waits for at each of them.
#include <doctest/doctest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "evalsched/daemon/sched/job_script.hpp"
#include "evalsched/daemon/sched/stage_kind.hpp"
#include "evalsched/daemon/state.hpp"
#include "evalsched/store/schema.hpp"
#include "evalsched/store/stage_jobs.hpp"
#include "tests/unit/evalsched_submit_fixture.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme::evalsched;

namespace {

const char* kSuite = "[suite]\nname = \"t\"\ncommand = \"eval {checkpoint} {dataset} {output}\"\n"
                     "[[dataset]]\nname = \"mmlu\"\nkind = \"multiple_choice\"\nsamples = 100\n";

std::int64_t submit(acme::store::Database& db) { return test::submit_suite(db, kSuite); }

int count(acme::store::Database& db, const std::string& sql) {
    auto q = db.prepare(sql);
    q.step();
    return static_cast<int>(q.column_int(0));
}

}  // namespace

TEST_CASE("a node without a stage job gets one; trials wait for it while it is queued or running, and need nothing once it is done") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const auto id = submit(db);
    CHECK(stage_plan(newest_stage(db, id, "n1")).kind == StagePlan::Kind::submit);

    const StageRow s = begin_stage(db, id, "n1", 1, 1000);
    CHECK(s.tag.starts_with("evalsched-"));
    CHECK(s.tag.find("-stage") != std::string::npos);
    // Submitting (a restart must settle it first): no GPU work there now.
    CHECK(stage_plan(newest_stage(db, id, "n1")).kind == StagePlan::Kind::unavailable);
    stage_submitted(db, s, 42);
    auto p = stage_plan(newest_stage(db, id, "n1"));
    CHECK(p.kind == StagePlan::Kind::wait);
    CHECK(p.job_id == 42);
    stage_running(db, s, "n1");
    CHECK(newest_stage(db, id, "n1")->state == "running");
    CHECK(stage_plan(newest_stage(db, id, "n1")).kind == StagePlan::Kind::wait);
    // Another node is another stage job.
    CHECK(stage_plan(newest_stage(db, id, "n2")).kind == StagePlan::Kind::submit);

    StageOutcome ok;
    ok.ok = true;
    ok.recorded = true;
    ok.copied = true;
    ok.bytes = 2e9;
    ok.seconds = 4;
    finish_stage(db, s, ok, "t/run7/step-100", 1010);
    CHECK(newest_stage(db, id, "n1")->state == "done");
    CHECK(stage_plan(newest_stage(db, id, "n1")).kind == StagePlan::Kind::none);
    // It feeds the staging priors as a trial's staging does.
    CHECK(count(db, "SELECT COUNT(*) FROM stagings WHERE node = 'n1' AND copied = 1 AND bytes = 2e9") == 1);
    CHECK(count(db, "SELECT COUNT(*) FROM model_loads WHERE node = 'n1'") == 1);
    CHECK(open_stages(db).empty());
}

TEST_CASE("a failed stage job is retried once; after the second failure the node's trials stage themselves") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const auto id = submit(db);
    const StageRow first = begin_stage(db, id, "n1", 1, 1000);
    stage_submitted(db, first, 7);
    StageOutcome bad;
    bad.reason = "staging_failed: staging directory is owned by uid 1002";
    finish_stage(db, first, bad, "t/run7/step-100", 1005);
    CHECK(newest_stage(db, id, "n1")->reason == bad.reason);
    CHECK(count(db, "SELECT COUNT(*) FROM stagings") == 0);  // no stage.json: nothing learnt
    auto p = stage_plan(newest_stage(db, id, "n1"));
    REQUIRE(p.kind == StagePlan::Kind::submit);
    CHECK(p.number == 2);
    CHECK(stage_given_up(db).empty());

    const StageRow retry = begin_stage(db, id, "n1", p.number, 1006);
    CHECK(retry.tag != first.tag);
    // A refusal counts as a failed try: a refusal that repeats never blocks the node.
    stage_refused(db, retry, "slurmctld refused the stage job: Invalid node name", 1006);
    CHECK(newest_stage(db, id, "n1")->state == "failed");
    CHECK(stage_plan(newest_stage(db, id, "n1")).kind == StagePlan::Kind::none);
    REQUIRE(stage_given_up(db).size() == 1);
    CHECK(stage_given_up(db)[0] == std::pair<std::int64_t, std::string>{id, "n1"});
}

TEST_CASE("a stage job lost in a restart is forgotten; those of an evaluation no longer active are killed") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const auto id = submit(db);
    const StageRow lost = begin_stage(db, id, "n1", 1, 1000);
    stage_lost(db, lost);
    CHECK_FALSE(newest_stage(db, id, "n1"));
    const StageRow s = begin_stage(db, id, "n2", 1, 1000);
    stage_submitted(db, s, 9);
    CHECK(stages_to_kill(db).empty());
    CHECK(cancel_evaluation(db, id, Caller{1001, 1001, "alice", false}, 1001) == CancelResult::cancelled);
    auto kill = stages_to_kill(db);
    REQUIRE(kill.size() == 1);
    CHECK(kill[0].job_id == 9);
    stage_killed(db, kill[0], 1002);
    CHECK(newest_stage(db, id, "n2")->state == "cancelled");
    CHECK(stages_to_kill(db).empty());
    CHECK(stage_plan(newest_stage(db, id, "n2")).kind == StagePlan::Kind::unavailable);
}

TEST_CASE("a stage job is CPU-only staging with an honest --time") {
    StageScript s;
    s.stage_helper = "/usr/lib/acme/evalsched-stage.sh";
    s.stage_dir = "/dev/shm";
    s.checkpoint_path = "/ckpt/it's";
    s.attempt_dir = "/results/a";
    const std::string text = stage_script(s);
    CHECK(text.find("evalsched_stage '/ckpt/it'\\''s'") != std::string::npos);
    CHECK(text.find("/stage.json") != std::string::npos);
    CHECK(text.find(fmt::format("exit {}", kStageFailedExit)) != std::string::npos);
    CHECK(stage_time_limit_s(0) == 120);
    CHECK(stage_time_limit_s(300) == 660);
}
