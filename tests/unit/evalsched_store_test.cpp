#include <doctest/doctest.h>

#include "evalsched/core/priors.hpp"
#include "evalsched/store/priors.hpp"
#include "evalsched/store/schema.hpp"
#include "evalsched/store/timeline.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme::store;

TEST_CASE("a new evalsched store has the priors tables at the newest version") {
    acme::test::TempDir dir;
    auto db = open_evalsched_store(dir.file("e.db"));
    CHECK(schema_version(db) == static_cast<int>(evalsched_migrations().size()));
    for (const char* table : {"prior_runs", "model_loads", "prior_startups"}) {
        auto q = db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?");
        q.bind(1, table).step();
        CHECK_MESSAGE(q.column_int(0) == 1, table);
    }
}

TEST_CASE("recent runs come back per key, newest N only, oldest first") {
    acme::test::TempDir dir;
    auto db = open_evalsched_store(dir.file("e.db"));
    for (int i = 0; i < 30; ++i) record_prior_run(db, PriorRun{"gsm8k", "7b", 1, 100.0 + i, 1, "c", "n1", 1000.0 + i});
    record_prior_run(db, PriorRun{"mmlu", "7b", 1, 50, 0.5, "c", "n1", 5});
    const auto runs = recent_prior_runs(db, 20);
    REQUIRE(runs.size() == 21);
    CHECK(runs[0].dataset == "gsm8k");
    CHECK(runs[0].seconds == 110);   // the 20 newest of 30
    CHECK(runs[19].seconds == 129);
    CHECK(runs[20].dataset == "mmlu");
    CHECK(runs[20].fraction == 0.5);
}

TEST_CASE("priors survive a daemon restart: the store's rows fill a PriorBook that estimates from history") {
    acme::test::TempDir dir;
    {
        auto db = open_evalsched_store(dir.file("e.db"));
        for (double s : {600.0, 620.0, 580.0}) record_prior_run(db, PriorRun{"gsm8k", "7b", 1, s / 4, 0.25, "c", "n1", s});
        record_model_load(db, ModelLoad{"n1", 14e9, 7, "c", 1});
    }
    auto db = open_evalsched_store(dir.file("e.db"));
    acme::evalsched::PriorBook book;
    for (const auto& r : recent_prior_runs(db)) book.add_run({r.dataset, r.size_class, r.gpus}, r.seconds, r.fraction);
    for (const auto& l : recent_model_loads(db)) book.add_stage(l.node, l.bytes, l.seconds);
    acme::evalsched::Dataset d;
    d.name = "gsm8k";
    d.samples = 1319;
    const auto e = book.run_estimate(d, {}, 1);
    CHECK(e.source == acme::evalsched::PriorSource::history);
    CHECK(e.median_s == doctest::Approx(600));
    CHECK(book.stage_seconds("n1", 14e9) == doctest::Approx(7));
}

TEST_CASE("impossible observations are refused by the schema") {
    acme::test::TempDir dir;
    auto db = open_evalsched_store(dir.file("e.db"));
    CHECK_THROWS_AS(record_prior_run(db, PriorRun{"x", "7b", 0, 10, 1, "", "", 0}), Error);
    CHECK_THROWS_AS(record_prior_run(db, PriorRun{"x", "7b", 1, -1, 1, "", "", 0}), Error);
    CHECK_THROWS_AS(record_model_load(db, ModelLoad{"n1", 0, 1, "", 0}), Error);
    CHECK_THROWS_AS(record_startup(db, StartupRun{"7b", 1, 0, "", "", 0}), Error);
    CHECK_THROWS_AS(record_startup(db, StartupRun{"7b", 0, 5, "", "", 0}), Error);
}

TEST_CASE("learned startups survive a restart: the newest window per size class and GPU count fills the PriorBook") {
    acme::test::TempDir dir;
    {
        auto db = open_evalsched_store(dir.file("e.db"));
        // 25 old slow loads, then 20 fast ones: only the newest 20 are read.
        for (int i = 0; i < 25; ++i) record_startup(db, StartupRun{"7b", 1, 30, "run7/a", "n1", static_cast<double>(i)});
        for (int i = 0; i < 20; ++i) record_startup(db, StartupRun{"7b", 1, 4.5 + 0.05 * i, "run7/b", "n2", 100.0 + i});
        record_startup(db, StartupRun{"70b", 8, 90, "big/a", "n3", 5});
    }
    auto db = open_evalsched_store(dir.file("e.db"));
    const auto rows = recent_startups(db);
    CHECK(rows.size() == 21);
    acme::evalsched::PriorBook book;
    book.add_window(recent_priors(db));
    CHECK(book.startups("7b", 1) == 20);
    CHECK(book.startup_seconds({7, 14e9}, 1) == doctest::Approx(4.975));
    CHECK(book.startup_seconds({70, 140e9}, 8) == doctest::Approx(90));
}

TEST_CASE("pruning keeps the newest runs of every key") {
    acme::test::TempDir dir;
    auto db = open_evalsched_store(dir.file("e.db"));
    for (int i = 0; i < 10; ++i) record_prior_run(db, PriorRun{"a", "7b", 1, 1.0 + i, 1, "", "", double(i)});
    for (int i = 0; i < 3; ++i) record_prior_run(db, PriorRun{"b", "7b", 1, 1.0 + i, 1, "", "", double(i)});
    CHECK(prune_prior_runs(db, 4) == 6);
    const auto runs = recent_prior_runs(db, 100);
    CHECK(runs.size() == 7);
    CHECK(runs[0].seconds == 7);
}

TEST_CASE("the attempt timeline lists submitted attempts oldest first, and refuses a file that is not evalschedd's") {
    acme::test::TempDir dir;
    {
        auto db = open_evalsched_store(dir.file("e.db"));
        db.exec("INSERT INTO evaluations (id, name, checkpoint, path, suite_name, suite_file, uid, gid, user, params_b, checkpoint_bytes,"
                " output_dir, state, submitted_at) VALUES (1, 'run7', 'step-1', '/c', 's', 's.toml', 1000, 1000, 'u', 7, 1, '/o', 'active', 1)");
        db.exec("INSERT INTO trials (id, evaluation, trial_key, datasets, gpus, median_s, p90_s, startup_s, command, state)"
                " VALUES (1, 1, 'run7/step-1/mmlu', 'mmlu', 2, 1, 1, 0, 'x', 'running')");
        db.exec("INSERT INTO attempts (trial, number, tag, job_id, node, state, submitted_at, ended_at)"
                " VALUES (1, 2, 't2', 12, 'n2', 'running', 200, NULL), (1, 1, 't1', 11, 'n1', 'failed', 100, 150),"
                " (1, 3, 't3', NULL, '', 'submitting', NULL, NULL)");
    }
    const auto spans = read_attempt_timeline(dir.file("e.db"));
    REQUIRE(spans.size() == 2);  // the attempt still submitting never reached slurmctld
    CHECK(spans[0].evaluation == "run7/step-1");
    CHECK(spans[0].trial == "run7/step-1/mmlu");
    CHECK(spans[0].node == "n1");
    CHECK(spans[0].job_id == 11);
    CHECK(spans[0].gpus == 2);
    CHECK(spans[0].ended == 150);
    CHECK(spans[1].state == "running");
    CHECK(spans[1].ended == 0);

    {
        Database other(dir.file("spool.db"));
        other.exec("CREATE TABLE jobs (id INTEGER)");
    }
    CHECK_THROWS_WITH(read_attempt_timeline(dir.file("spool.db")), doctest::Contains("not an evalschedd store"));
}
