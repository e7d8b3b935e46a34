// Pilot allocations in the evalsched store (mode = pilots, store v10): the transitions the
// scheduler makes on pilots and on the trials they run as job steps, leases included.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "evalsched/daemon/sched/job_script.hpp"
#include "evalsched/daemon/state.hpp"
#include "evalsched/store/pilots.hpp"
#include "evalsched/store/schema.hpp"
#include "tests/unit/evalsched_submit_fixture.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme::evalsched;

namespace {

const char* kSuite =
    "[suite]\nname = \"t\"\ncommand = \"eval {checkpoint} {dataset} {output}\"\n"
    "[[dataset]]\nname = \"mmlu\"\nkind = \"multiple_choice\"\n[[dataset]]\nname = \"gsm8k\"\nkind = \"generation\"\n";

std::int64_t submit(acme::store::Database& db) { return test::submit_suite(db, kSuite); }

PilotRow running_pilot(acme::store::Database& db, std::int64_t eval) {
    PilotRow p = begin_pilot(db, eval, 1, "n1", 180, 3600, 1000);
    pilot_submitted(db, p, 42);
    pilot_running(db, p, "n2", 1800, 1010);
    return *load_pilot(db, p.id);
}

}  // namespace

TEST_CASE("a pilot is tagged, submitted, runs with the granted limit read back, and is released") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const auto id = submit(db);
    const PilotRow p = begin_pilot(db, id, 2, "n1", 180, 3600, 1000);
    CHECK(p.state == "submitting");
    CHECK(p.tag == pilot_tag(instance_id(db), id, p.id));
    CHECK(open_pilots(db).size() == 1);
    pilot_submitted(db, p, 42);
    CHECK(load_pilot(db, p.id)->state == "queued");
    CHECK(*load_pilot(db, p.id)->job_id == 42);
    // Backfill cut its --time toward --time-min: the pilot plans with what was granted.
    pilot_running(db, p, "n2", 1800, 1010);
    const PilotRow r = *load_pilot(db, p.id);
    CHECK(r.state == "running");
    CHECK(r.node == "n2");
    CHECK(*r.granted_s == doctest::Approx(1800));
    CHECK(r.remaining_s(1110) == doctest::Approx(1700));
    CHECK(r.remaining_s(9999) == 0);
    pilot_releasing(db, r, "nothing fits");
    CHECK(load_pilot(db, p.id)->state == "releasing");
    pilot_ended(db, r, "completed", 1200);
    CHECK(load_pilot(db, p.id)->state == "ended");
    CHECK(load_pilot(db, p.id)->reason == "nothing fits; completed");
    CHECK(open_pilots(db).empty());
}

TEST_CASE("a pilot slurmctld refused (or a restart did not find) is forgotten") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const auto id = submit(db);
    const PilotRow p = begin_pilot(db, id, 1, "n1", 180, 3600, 1000);
    pilot_never_submitted(db, p);
    CHECK_FALSE(load_pilot(db, p.id));
    // The next pilot's tag differs from any other's.
    const PilotRow q = begin_pilot(db, id, 1, "n1", 180, 3600, 1000);
    CHECK(q.tag != pilot_tag(instance_id(db), id, 999));
}

TEST_CASE("a step is an attempt leased to its pilot; finished like a job's attempt") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const auto id = submit(db);
    const PilotRow p = running_pilot(db, id);
    const auto pending = trials_in_state(db, {"pending"});
    REQUIRE(pending.size() == 2);
    const AttemptRow a = begin_step(db, pending[0], p, 300, 1020);
    CHECK(a.pilot == p.id);
    CHECK(*a.job_id == 42);
    CHECK(a.node == "n2");
    CHECK(load_trial(db, pending[0].id)->state == "running");
    CHECK(load_trial(db, pending[0].id)->attempts == 1);
    // Steps are not jobs of their own: the trial jobs' lifecycle never sees them.
    CHECK(open_attempts(db).empty());
    REQUIRE(open_steps(db).size() == 1);
    step_id_recorded(db, a, 3);
    Outcome ok;
    ok.success = true;
    ok.node = "n2";
    ok.scores = {{"mmlu", "accuracy", 0.5}};
    finish_attempt(db, a, ok, "7b", 1100);
    CHECK(load_trial(db, pending[0].id)->state == "done");
    CHECK(open_steps(db).empty());
    CHECK(load_pilot(db, p.id)->steps == 1);
    auto q = db.prepare("SELECT step_id, state FROM attempts WHERE id = ?");
    q.bind(1, a.id);
    REQUIRE(q.step());
    CHECK(q.column_int(0) == 3);
    CHECK(q.column_text(1) == "done");
}

TEST_CASE("a pilot that ends under a step loses it: the trial is pending again, the attempt not counted") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const auto id = submit(db);
    const PilotRow p = running_pilot(db, id);
    const auto pending = trials_in_state(db, {"pending"});
    // One trial done in the pilot, the next one running when the pilot is cancelled.
    const AttemptRow done = begin_step(db, pending[0], p, 300, 1020);
    Outcome ok;
    ok.success = true;
    ok.node = "n2";
    ok.scores = {{"mmlu", "accuracy", 0.5}};
    finish_attempt(db, done, ok, "7b", 1100);
    const AttemptRow running = begin_step(db, pending[1], p, 300, 1100);
    pilot_ended(db, *load_pilot(db, p.id), "cancelled", 1150);
    CHECK(load_trial(db, pending[0].id)->state == "done");  // nothing it finished is lost
    const TrialRow t = *load_trial(db, pending[1].id);
    CHECK(t.state == "pending");
    CHECK(t.attempts == 0);
    auto why = db.prepare("SELECT reason FROM trials WHERE id = ?");
    why.bind(1, t.id);
    REQUIRE(why.step());
    CHECK(why.column_text(0).find("ended mid-trial (cancelled)") != std::string::npos);
    CHECK(open_steps(db).empty());
    // Its rerun in another pilot is attempt 2 by number (tags stay unique), the first counted.
    const PilotRow p2 = running_pilot(db, id);
    const AttemptRow again = begin_step(db, t, p2, 300, 1200);
    CHECK(again.number == running.number + 1);
    CHECK(again.tag != running.tag);
    CHECK(load_trial(db, t.id)->attempts == 1);
    // A step lost twice (srun could not start) is still not counted; a lost attempt is not lost again.
    step_lost(db, again, "cannot start the step", 1210);
    step_lost(db, again, "cannot start the step", 1220);
    CHECK(load_trial(db, t.id)->attempts == 0);
    CHECK(load_trial(db, t.id)->state == "pending");
}

TEST_CASE("a cancelled evaluation's pilots are found to stop; its cancelled steps stay cancelled") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const auto id = submit(db);
    const PilotRow p = running_pilot(db, id);
    const PilotRow queued = begin_pilot(db, id, 1, "n3", 180, 3600, 1000);
    pilot_submitted(db, queued, 43);
    const auto pending = trials_in_state(db, {"pending"});
    const AttemptRow a = begin_step(db, pending[0], p, 300, 1020);
    CHECK(pilots_of_inactive(db, {"running"}).empty());
    REQUIRE(cancel_evaluation(db, id, Caller{1001, 1001, "alice", false}, 1001) == CancelResult::cancelled);
    CHECK(pilots_of_inactive(db, {"running"}).size() == 1);
    CHECK(pilots_of_inactive(db, {"submitting", "queued"}).size() == 1);
    pilot_ended(db, *load_pilot(db, p.id), "completed", 1100);
    CHECK(load_trial(db, pending[0].id)->state == "cancelled");
    (void)a;
}

TEST_CASE("a pilot's script only holds the allocation and exits 0 when released; a step's records its id") {
    const std::string s = pilot_script();
    CHECK(s.find("trap 'exit 0' URG TERM") != std::string::npos);
    CHECK(s.find("srun") == std::string::npos);
    TrialScript t;
    t.attempt_dir = "/r/a";
    t.command = "eval";
    CHECK(trial_script(t).find("step.json") == std::string::npos);
    t.record_step = true;
    CHECK(trial_script(t).find("\"${SLURM_STEP_ID:-null}\" > \"$attempt_dir/step.json\"") != std::string::npos);
}

TEST_CASE("a metric job after a trial run as a step is not chained to the pilot's job: it is submitted once the step is done") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const auto id = test::submit_suite(db,
                                       "[suite]\nname = \"t\"\ncommand = \"eval {checkpoint} {dataset} {output}\"\n"
                                       "[[dataset]]\nname = \"gsm8k\"\nkind = \"generation\"\nmetric_command = \"score {dataset} {output}\"\n");
    const PilotRow p = running_pilot(db, id);
    const MetricRow m = metrics_in_state(db, {"waiting"}).at(0);
    const AttemptRow a = begin_step(db, *load_trial(db, m.trials.at(0)), p, 300, 1020);
    // The pilot's job 42 ends only when the pilot is released, after its last step: chaining
    // to it held the metric job until then. While the step runs, there is nothing to chain to.
    const MetricDecision running = decide_metric(metric_trial_progress(db, m));
    CHECK(running.kind == MetricDecision::Kind::wait);
    Outcome ok;
    ok.success = true;
    ok.node = "n2";
    finish_attempt(db, a, ok, "7b", 1100);
    const MetricDecision done = decide_metric(metric_trial_progress(db, m));
    CHECK(done.kind == MetricDecision::Kind::submit);
    CHECK(done.after.empty());
}
