#include <doctest/doctest.h>

#include <array>

#include "common/store/migrations.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme::store;

namespace {
constexpr std::array kTwo = {
    Migration{1, "create a", "CREATE TABLE a (x INTEGER)"},
    Migration{2, "add a.y", "ALTER TABLE a ADD COLUMN y TEXT"},
};
}  // namespace

TEST_CASE("migrations are applied once, in order, and recorded") {
    acme::test::TempDir dir;
    Database db(dir.file("m.db"));
    CHECK(schema_version(db) == 0);
    CHECK(migrate(db, std::span(kTwo).first(1)) == 1);
    CHECK(schema_version(db) == 1);
    // Running the same list again changes nothing (ALTER TABLE would fail if re-run).
    CHECK(migrate(db, kTwo) == 2);
    CHECK(migrate(db, kTwo) == 2);
    CHECK(schema_version(db) == 2);
    db.prepare("INSERT INTO a (x, y) VALUES (?, ?)").bind_all(1, "one").run();

    auto names = db.prepare("SELECT version, name FROM schema_version ORDER BY version");
    REQUIRE(names.step());
    CHECK(names.column_text(1) == "create a");
    REQUIRE(names.step());
    CHECK(names.column_int(0) == 2);
    CHECK_FALSE(names.step());
}

TEST_CASE("a failing migration rolls back entirely and the version stays") {
    acme::test::TempDir dir;
    Database db(dir.file("m.db"));
    migrate(db, std::span(kTwo).first(1));
    constexpr std::array broken = {
        kTwo[0],
        Migration{2, "half broken", "CREATE TABLE b (x INTEGER); CREATE TABLE a (x INTEGER)"},
    };
    CHECK_THROWS_AS(migrate(db, broken), Error);
    CHECK(schema_version(db) == 1);
    auto b = db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE name = 'b'");
    b.step();
    CHECK(b.column_int(0) == 0);
}

TEST_CASE("a file from a newer build is refused, not downgraded") {
    acme::test::TempDir dir;
    Database db(dir.file("m.db"));
    migrate(db, kTwo);
    try {
        migrate(db, std::span(kTwo).first(1));
        FAIL("expected a refusal");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("newer than this build") != std::string::npos);
    }
}

TEST_CASE("a migration list with a gap is a programming error") {
    acme::test::TempDir dir;
    Database db(dir.file("m.db"));
    constexpr std::array gap = {Migration{1, "a", "SELECT 1"}, Migration{3, "c", "SELECT 1"}};
    CHECK_THROWS_AS(migrate(db, gap), std::logic_error);
}
