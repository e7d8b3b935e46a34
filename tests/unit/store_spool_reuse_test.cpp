// A job id Slurm hands out again (26.05's SLUID tells the two jobs apart) never mixes with the
// older job's rows: they move to retired/<node>.db, the new job's rows stay.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>

#include "common/store/spool.hpp"
#include "common/store/spool_gpu.hpp"
#include "common/store/spool_jobs.hpp"
#include "common/store/spool_reuse.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme::store;

namespace {

long long count(Database& db, const char* table, long long job_id) {
    auto q = db.prepare(std::string("SELECT COUNT(*) FROM ") + table + " WHERE job_id = ?");
    q.bind(1, job_id).step();
    return q.column_int(0);
}

void samples_at(Database& db, long long job_id, double ts) {
    insert_gpu_samples(db, job_id, {{0, ts, {}}, {1, ts, {}}});
}

}  // namespace

TEST_CASE("a job id handed out again: the older job's rows move to retired/, the new job's stay") {
    acme::test::TempDir dir;
    const auto path = spool_path(dir.path().string(), "n1");
    auto db = open_spool(path);
    // The older job 7 (SLUID "sA"): sampled at 1000, ended with a record and a log tail.
    record_sampling_started(db, 7, 1000, 1000, "n1", "0,1", 1000, 10, "sA");
    samples_at(db, 7, 1010);
    db.prepare("INSERT INTO log_tails (job_id, restart, node, paths, bytes, text) VALUES (7, 0, 'n1', '[]', 3, 'old')").run();
    // slurmctld lost its state: job 7 again, another job (SLUID "sB"), started at 5000; its
    // first task exit is in the spool before its epilog writes the record.
    db.prepare("INSERT INTO task_exits (job_id, step_id, task_id, node, ts, wait_status) VALUES (7, 0, 0, 'n1', 5001, 0)").run();
    SpoolJobRow row;
    row.job_id = 7;
    row.node = "n1";
    row.start_time = 5000;
    row.end_time = 5100;
    row.sluid = "sB";
    upsert_job_record(db, row);

    // What the spool says of job 7 is the new job's alone.
    CHECK(count(db, "gpu_samples", 7) == 0);
    CHECK(count(db, "log_tails", 7) == 0);
    CHECK(count(db, "task_exits", 7) == 1);
    auto q = db.prepare("SELECT sluid, started_at, start_time FROM jobs WHERE job_id = 7");
    REQUIRE(q.step());
    CHECK(q.column_text(0) == "sB");
    CHECK(q.is_null(1));  // the older job's sampling start is not the new job's
    CHECK(q.column_double(2) == 5000);

    // The older job's rows, whole, in the retired spool, which is a spool like any other.
    const auto retired_path = retired_spool_path(path);
    CHECK(retired_path == dir.path().string() + "/retired/n1.db");
    struct stat st {};
    REQUIRE(::stat((dir.path() / "retired").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    auto retired = open_spool_read_only(retired_path);
    CHECK(count(retired, "gpu_samples", 7) == 2);
    CHECK(count(retired, "log_tails", 7) == 1);
    CHECK(count(retired, "task_exits", 7) == 0);
    auto r = retired.prepare("SELECT sluid, started_at FROM jobs WHERE job_id = 7");
    REQUIRE(r.step());
    CHECK(r.column_text(0) == "sA");
    CHECK(r.column_double(1) == 1000);
}

TEST_CASE("the same SLUID (a requeued job), no SLUID (Slurm before 26.05) or an unknown start move nothing") {
    acme::test::TempDir dir;
    const auto path = spool_path(dir.path().string(), "n1");
    auto db = open_spool(path);
    record_sampling_started(db, 9, 1000, 1000, "n1", "0", 1000, 10, "sA");
    samples_at(db, 9, 1010);
    // Requeued: the same SLUID, a later run.
    record_sampling_started(db, 9, 1000, 1000, "n1", "0", 2000, 10, "sA");
    samples_at(db, 9, 2010);
    CHECK(count(db, "gpu_samples", 9) == 4);
    // A release without SLUIDs.
    CHECK(retire_reused_job_id(db, 9, "", 3000) == 0);
    // Another SLUID, but no start time known for it.
    CHECK(retire_reused_job_id(db, 9, "sB", 0) == 0);
    CHECK(count(db, "gpu_samples", 9) == 4);
    CHECK_FALSE(std::filesystem::exists(dir.path() / "retired"));
    // A row written before SLUIDs (NULL) is never taken for another job's.
    record_sampling_started(db, 10, 1000, 1000, "n1", "0", 1000, 10);
    samples_at(db, 10, 1010);
    CHECK(retire_reused_job_id(db, 10, "sC", 3000) == 0);
    CHECK(count(db, "gpu_samples", 10) == 2);
}

TEST_CASE("an id handed out a third time replaces its older copy in retired/ and keeps other jobs") {
    acme::test::TempDir dir;
    const auto path = spool_path(dir.path().string(), "n1");
    auto db = open_spool(path);
    record_sampling_started(db, 3, 0, 0, "n1", "0", 100, 10, "s1");
    record_sampling_started(db, 4, 0, 0, "n1", "0", 100, 10, "s9");
    samples_at(db, 4, 110);
    record_sampling_started(db, 3, 0, 0, "n1", "0", 200, 10, "s2");
    record_sampling_started(db, 3, 0, 0, "n1", "0", 300, 10, "s3");
    auto retired = open_spool_read_only(retired_spool_path(path));
    auto q = retired.prepare("SELECT sluid FROM jobs WHERE job_id = 3");
    REQUIRE(q.step());
    CHECK(q.column_text(0) == "s2");
    CHECK(count(db, "gpu_samples", 4) == 2);
    CHECK(count(retired, "jobs", 4) == 0);
}
