// Which of a requeued job's rows in slurmdbd is one run's (common/slurm/run_row.hpp).
#include <doctest/doctest.h>

#include <slurm/slurm.h>

#include "common/slurm/run_row.hpp"

using namespace acme::slurm;

namespace {
// Job 42 as slurmdbd holds it after an admin's requeue: the first run REQUEUED (submitted at
// 1000, ran 1010-1100), the second submitted at 1105 when the requeue finished.
const RunRow first_run{1000, 1010, 1100, JOB_REQUEUE, false};
const RunRow next_pending{1105, 0, 0, JOB_PENDING, false};
const RunRow next_running{1105, 1130, 0, JOB_RUNNING, false};

JobRecord record(std::uint32_t restarts, double submit, double start, std::uint32_t state, bool completing) {
    JobRecord r;
    r.job_id = 42;
    r.restart_count = restarts;
    r.submit_time = submit;
    r.start_time = start;
    r.state = state;
    r.completing = completing;
    return r;
}
}  // namespace

TEST_CASE("an epilog names its run by what slurmctld said of the job while the run was its own") {
    // Ended, its epilogs running: the job's own submit and start.
    auto run = run_selector(record(0, 1000, 1010, JOB_FAILED, true), 0);
    CHECK(run.submit == 1000);
    CHECK(run.start == 1010);
    CHECK(run.before == 0);
    // A cleanly ended job's detached epilog, after the job left COMPLETING: the same.
    run = run_selector(record(0, 1000, 1010, JOB_COMPLETE, false), 0);
    CHECK((run.submit == 1000 && run.start == 1010));
    // Requeued by an admin while it ran: the restart count (the epilog's too) went up at once,
    // but the submit and start stay the run's until the requeue completes, after the epilogs.
    // Its start is backfill's guess at the next run's by then: not used.
    run = run_selector(record(1, 1000, 1106, JOB_PENDING, true), 1);
    CHECK(run.submit == 1000);
    CHECK(run.start == 0);
    // A detached epilog that asked after the requeue completed: the submit is the next run's,
    // whether that run waits or already runs.
    for (const auto& r : {record(1, 1105, 0, JOB_PENDING, false), record(1, 1105, 1130, JOB_RUNNING, false)}) {
        run = run_selector(r, 1);
        CHECK(run.submit == 0);
        CHECK(run.start == 0);
        CHECK(run.before == 1105);
    }
    // The job requeued again since: it cannot tell which row is its run's.
    CHECK(run_selector(record(3, 1200, 0, JOB_PENDING, false), 1).unknown);
    // slurmctld no longer knew the job: the newest row, as before.
    run = run_selector(std::nullopt, 0);
    CHECK((run.submit == 0 && run.start == 0 && run.before == 0 && !run.unknown));
}

TEST_CASE("the run's own row, whatever rows the job's later runs have") {
    const RunSelector by_submit{1000, 1010, 0, false};
    // Before the next run's row exists, and after: always the first run's row.
    for (const auto& rows : {std::vector<RunRow>{first_run}, std::vector<RunRow>{next_pending, first_run},
                             std::vector<RunRow>{first_run, next_running}}) {
        const auto c = pick_run_row(rows, by_submit);
        REQUIRE(c.pick == RunPick::found);
        CHECK(rows[c.index].submit == 1000);
    }
    // By its start alone too; a submit, when known, decides (a start can be a guess).
    const auto c = pick_run_row({next_running, first_run}, RunSelector{0, 1010, 0, false});
    REQUIRE(c.pick == RunPick::found);
    CHECK(c.index == 1);
    const auto guessed = pick_run_row({first_run, next_running}, RunSelector{1000, 1130, 0, false});
    REQUIRE(guessed.pick == RunPick::found);
    CHECK(guessed.index == 0);
    // The newest run's epilog finds its own row, not the one before.
    const auto second = pick_run_row({first_run, next_running}, RunSelector{1105, 1130, 0, false});
    REQUIRE(second.pick == RunPick::found);
    CHECK(second.index == 1);
}

TEST_CASE("a run without a row waits for it, or is told it never gets one") {
    // The first run's row still in slurmctld's queue to slurmdbd: not yet.
    CHECK(pick_run_row({}, RunSelector{1000, 1010, 0, false}).pick == RunPick::not_yet);
    // The second run's row not there yet: never the first run's row instead.
    CHECK(pick_run_row({first_run}, RunSelector{1105, 1130, 0, false}).pick == RunPick::not_yet);
    // A later run has its row and this one none yet (slurmdbd took the later one first).
    CHECK(pick_run_row({next_running}, RunSelector{1000, 1010, 0, false}).pick == RunPick::superseded);
    CHECK(pick_run_row({first_run, next_running}, RunSelector{0, 0, 0, true}).pick == RunPick::unknown);
}

TEST_CASE("a run named by the next run's submit is the newest row before it") {
    const RunRow older{900, 905, 950, JOB_REQUEUE, false};
    const auto c = pick_run_row({older, next_pending, first_run}, RunSelector{0, 0, 1105, false});
    REQUIRE(c.pick == RunPick::found);
    CHECK(c.index == 2);
    // Not named at all: the newest row.
    const auto newest = pick_run_row({first_run, next_pending, older}, RunSelector{});
    REQUIRE(newest.pick == RunPick::found);
    CHECK(newest.index == 1);
}

TEST_CASE("slurmdbd's modify is given a condition only the run's row meets") {
    // Ended (requeued): its state, ended at its own end.
    auto f = run_row_filter(first_run);
    REQUIRE(f);
    CHECK(!f->any);
    CHECK(f->state == JOB_REQUEUE);
    CHECK(f->usage_start == 1100);
    CHECK(f->usage_end == 1100);
    // Its end not in slurmdbd yet: running in the second it started, which no other run was.
    f = run_row_filter(RunRow{1000, 1010, 0, JOB_RUNNING, false});
    REQUIRE(f);
    CHECK(f->state == JOB_RUNNING);
    CHECK(f->usage_start == 1010);
    CHECK(f->usage_end == 1011);
    // Neither started nor ended: only as the newest row, as before.
    CHECK(!run_row_filter(next_pending));
    RunRow newest = next_pending;
    newest.newest = true;
    f = run_row_filter(newest);
    REQUIRE(f);
    CHECK(f->any);
}

TEST_CASE("a run's own restart count, though slurmctld and the epilog already count its requeue") {
    // Never requeued: the epilog's count, whatever slurmctld says of the ended job.
    CHECK(run_restart(record(0, 1000, 1010, JOB_COMPLETE, true), 0) == 0);
    CHECK(run_restart(record(0, 1000, 1010, JOB_FAILED, false), 0) == 0);
    // The second run of a requeued job, ended: its own count.
    CHECK(run_restart(record(1, 1105, 1130, JOB_COMPLETE, true), 1) == 1);
    // Requeued by an admin while it ran: slurmctld and the epilog's environment both say 1 (the
    // next run's) while the first run's epilogs run; the run is the first.
    CHECK(run_restart(record(1, 1000, 1106, JOB_PENDING, true), 1) == 0);
    // ... and asked after the requeue completed (a detached epilog), the next run waiting or running.
    CHECK(run_restart(record(1, 1105, 0, JOB_PENDING, false), 1) == 0);
    CHECK(run_restart(record(1, 1105, 1130, JOB_RUNNING, false), 1) == 0);
    // The third run requeued by an admin: the epilog says 3; it was run 2.
    CHECK(run_restart(record(3, 1200, 1300, JOB_PENDING, true), 3) == 2);
    // A job that had ended, requeued after (scontrol requeue of a finished job): the epilog's
    // count was read before it and is the run's own.
    CHECK(run_restart(record(1, 1105, 0, JOB_PENDING, false), 0) == 0);
    // faultguard's own requeue (recovery) comes after slurmctld was asked: not counted then.
    CHECK(run_restart(record(0, 1000, 1010, JOB_FAILED, true), 0) == 0);
    // Another node's epilog asking after that requeue: the job pending, its count the next run's.
    CHECK(run_restart(record(1, 1000, 1106, JOB_PENDING, true), 0) == 0);
    // slurmctld no longer knew the job: the epilog's count as given.
    CHECK(run_restart(std::nullopt, 1) == 1);
}
