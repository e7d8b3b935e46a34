#include <doctest/doctest.h>

#include <sys/stat.h>

#include "common/store/database.hpp"
#include "tests/unit/temp_dir.hpp"

using acme::store::Database;
using acme::store::Error;
using acme::store::Null;

TEST_CASE("bound values round-trip, including text that looks like SQL") {
    acme::test::TempDir dir;
    Database db(dir.file("t.db"));
    db.exec("CREATE TABLE t (i INTEGER, d REAL, s TEXT)");
    const std::string hostile = "x'); DROP TABLE t; --";
    db.prepare("INSERT INTO t VALUES (?, ?, ?)").bind_all(std::int64_t{1} << 40, 2.5, hostile).run();
    db.prepare("INSERT INTO t VALUES (?, ?, ?)").bind_all(7, Null{}, std::optional<std::string>{}).run();

    auto q = db.prepare("SELECT i, d, s FROM t ORDER BY i");
    REQUIRE(q.step());
    CHECK(q.column_int(0) == 7);
    CHECK_FALSE(q.column_optional_double(1).has_value());
    CHECK_FALSE(q.column_optional_text(2).has_value());
    REQUIRE(q.step());
    CHECK(q.column_int(0) == (std::int64_t{1} << 40));
    CHECK(q.column_double(1) == doctest::Approx(2.5));
    CHECK(q.column_text(2) == hostile);
    CHECK_FALSE(q.step());
}

TEST_CASE("a new database is in WAL mode with a busy timeout") {
    acme::test::TempDir dir;
    Database db(dir.file("t.db"));
    auto mode = db.prepare("PRAGMA journal_mode");
    REQUIRE(mode.step());
    CHECK(mode.column_text(0) == "wal");
    auto timeout = db.prepare("PRAGMA busy_timeout");
    REQUIRE(timeout.step());
    CHECK(timeout.column_int(0) > 0);
}

TEST_CASE("a transaction that throws leaves nothing behind") {
    acme::test::TempDir dir;
    Database db(dir.file("t.db"));
    db.exec("CREATE TABLE t (i INTEGER)");
    CHECK_THROWS_AS(db.transaction([&] {
        db.prepare("INSERT INTO t VALUES (?)").bind(1, 1).run();
        throw std::runtime_error("boom");
    }),
                    std::runtime_error);
    auto count = db.prepare("SELECT COUNT(*) FROM t");
    count.step();
    CHECK(count.column_int(0) == 0);

    const int n = db.transaction([&] {
        db.prepare("INSERT INTO t VALUES (?)").bind(1, 2).run();
        return 1;
    });
    CHECK(n == 1);
    count.reset();
    count.step();
    CHECK(count.column_int(0) == 1);
}

TEST_CASE("errors name the file and what failed") {
    acme::test::TempDir dir;
    Database db(dir.file("t.db"));
    try {
        db.prepare("SELECT * FROM no_such_table");
        FAIL("prepare should have thrown");
    } catch (const Error& e) {
        const std::string what = e.what();
        CHECK(what.find("t.db") != std::string::npos);
        CHECK(what.find("no_such_table") != std::string::npos);
    }
}

TEST_CASE("opening a missing file read-only fails instead of creating it") {
    acme::test::TempDir dir;
    acme::store::OpenOptions ro;
    ro.read_only = true;
    ro.create = false;
    CHECK_THROWS_AS(Database(dir.file("absent.db"), ro), Error);
    CHECK_FALSE(std::filesystem::exists(dir.file("absent.db")));
}

TEST_CASE("a store this process creates is readable by its owner only, -wal included; an existing one keeps its mode") {
    acme::test::TempDir dir;
    const mode_t old_umask = ::umask(022);
    {
        Database db(dir.file("private.db"));
        db.exec("CREATE TABLE t (x)");
        db.exec("INSERT INTO t VALUES (1)");
        struct stat st {};
        REQUIRE(::stat(dir.file("private.db").c_str(), &st) == 0);
        CHECK((st.st_mode & 0777) == 0600);
        REQUIRE(::stat((dir.file("private.db") + "-wal").c_str(), &st) == 0);
        CHECK((st.st_mode & 0777) == 0600);
    }
    ::chmod(dir.file("private.db").c_str(), 0640);
    { Database again(dir.file("private.db")); }
    struct stat st {};
    REQUIRE(::stat(dir.file("private.db").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0640);
    ::umask(old_umask);
}
