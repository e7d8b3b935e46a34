#include <doctest/doctest.h>

#include <cstdio>

#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include "common/store/spool.hpp"
#include "common/store/spool_failures.hpp"
#include "common/store/spool_gpu.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme::store;

TEST_CASE("a new spool has schema v1 with every table DESIGN.md names") {
    acme::test::TempDir dir;
    auto db = open_spool(spool_path(dir.path().string(), "n1"));
    CHECK(schema_version(db) == static_cast<int>(spool_migrations().size()));
    for (const char* table : {"jobs", "steps", "gpu_samples", "gpu_events", "task_exits", "diagnoses"}) {
        auto q = db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?");
        q.bind(1, table).step();
        CHECK_MESSAGE(q.column_int(0) == 1, table);
    }
}

TEST_CASE("reopening a spool is idempotent and keeps its rows") {
    acme::test::TempDir dir;
    const auto path = spool_path(dir.path().string(), "n2");
    {
        auto db = open_spool(path);
        db.prepare("INSERT INTO jobs (job_id, node, gpus) VALUES (?, ?, ?)").bind_all(42, "n2", "0,1").run();
    }
    auto db = open_spool(path);
    auto q = db.prepare("SELECT gpus FROM jobs WHERE job_id = ?");
    REQUIRE(q.bind(1, 42).step());
    CHECK(q.column_text(0) == "0,1");
}

TEST_CASE("spool paths refuse node names that would escape the directory") {
    CHECK(spool_path("/var/spool/acme", "n1") == "/var/spool/acme/n1.db");
    CHECK(spool_path("/var/spool/acme/", "gpu-a07") == "/var/spool/acme/gpu-a07.db");
    CHECK_THROWS_AS(spool_path("/d", "../etc/passwd"), std::invalid_argument);
    CHECK_THROWS_AS(spool_path("/d", ""), std::invalid_argument);
    CHECK_THROWS_AS(spool_path("/d", ".."), std::invalid_argument);
}

TEST_CASE("four processes writing one spool at once lose no row and see no SQLITE_BUSY") {
    acme::test::TempDir dir;
    const auto path = spool_path(dir.path().string(), "n1");
    constexpr int kWriters = 4;
    constexpr int kBatches = 50;
    constexpr int kRowsPerBatch = 20;

    std::vector<pid_t> children;
    for (int w = 0; w < kWriters; ++w) {
        const pid_t pid = fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            // Each child opens (and migrates) on its own, as separate samplers would.
            int rc = 0;
            try {
                auto db = open_spool(path);
                auto insert = db.prepare("INSERT INTO gpu_samples (job_id, gpu, ts, util_gpu) VALUES (?, ?, ?, ?)");
                for (int b = 0; b < kBatches; ++b) {
                    db.transaction([&] {
                        for (int r = 0; r < kRowsPerBatch; ++r) {
                            insert.bind_all(w, r % 4, b + r / 100.0, 50.0).run();
                            insert.reset();
                        }
                    });
                }
            } catch (const Error& e) {
                rc = e.busy() ? 3 : 4;
                std::fprintf(stderr, "writer %d: %s [%s]\n", w, e.what(), std::string(e.statement()).c_str());
            } catch (...) {
                rc = 5;
            }
            _exit(rc);
        }
        children.push_back(pid);
    }
    for (pid_t pid : children) {
        int status = 0;
        REQUIRE(waitpid(pid, &status, 0) == pid);
        REQUIRE(WIFEXITED(status));
        CHECK_MESSAGE(WEXITSTATUS(status) == 0, "writer exit code 3 means SQLITE_BUSY reached the caller");
    }
    auto db = open_spool(path);
    auto total = db.prepare("SELECT COUNT(*), COUNT(DISTINCT job_id) FROM gpu_samples");
    total.step();
    CHECK(total.column_int(0) == kWriters * kBatches * kRowsPerBatch);
    CHECK(total.column_int(1) == kWriters);
}

TEST_CASE("an XID counts against the node until a health check after it, whose detail can be amended") {
    acme::test::TempDir dir;
    auto db = open_spool(spool_path(dir.path().string(), "n1"));
    GpuEventRow xid;
    xid.gpu = 0;
    xid.ts = 100.0;
    xid.kind = "xid";
    xid.code = 79;
    insert_gpu_event(db, 7, xid);
    CHECK(xids_since_last_health_check(db).size() == 1);
    // The gate stores its verdict first ("acting"), then what it did: the row, not the second
    // write, is what stops the XID from counting again.
    const auto row = insert_health_check(db, "n1", 101.0, 8, false, "failed (XID 79 on GPU 0); acting");
    CHECK(xids_since_last_health_check(db).empty());
    update_health_check_detail(db, row, "failed (XID 79 on GPU 0); node drained");
    const auto check = job_health_check(db, 8);
    REQUIRE(check);
    CHECK_FALSE(check->passed);
    CHECK(check->detail == "failed (XID 79 on GPU 0); node drained");
    xid.ts = 102.0;
    insert_gpu_event(db, 9, xid);
    CHECK(xids_since_last_health_check(db).size() == 1);
}
