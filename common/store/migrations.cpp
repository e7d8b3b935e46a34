#include "common/store/migrations.hpp"

#include <fmt/format.h>

namespace acme::store {
namespace {

constexpr std::string_view kCreateVersionTable =
    "CREATE TABLE IF NOT EXISTS schema_version ("
    " version INTEGER PRIMARY KEY,"
    " name TEXT NOT NULL,"
    " applied_at INTEGER NOT NULL DEFAULT (strftime('%s','now')))";

int current_version(Database& db) {
    auto stmt = db.prepare("SELECT COALESCE(MAX(version), 0) FROM schema_version");
    stmt.step();
    return static_cast<int>(stmt.column_int(0));
}

}  // namespace

int schema_version(Database& db) {
    auto probe = db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'");
    probe.step();
    if (probe.column_int(0) == 0) return 0;
    return current_version(db);
}

int migrate(Database& db, std::span<const Migration> migrations) {
    for (std::size_t i = 0; i < migrations.size(); ++i) {
        if (migrations[i].version != static_cast<int>(i) + 1)
            throw std::logic_error(fmt::format("migration list out of order at \"{}\"", migrations[i].name));
    }
    const int newest = static_cast<int>(migrations.size());
    return db.transaction([&] {
        db.exec(kCreateVersionTable);
        const int have = current_version(db);
        if (have > newest)
            throw Error(0, fmt::format("{}: schema version {} is newer than this build knows ({}); "
                                       "upgrade acme-slurm before using this file",
                                       db.path(), have, newest));
        auto record = db.prepare("INSERT INTO schema_version (version, name) VALUES (?, ?)");
        for (int v = have + 1; v <= newest; ++v) {
            const Migration& m = migrations[static_cast<std::size_t>(v - 1)];
            db.exec(m.sql);
            record.bind_all(m.version, m.name).run();
            record.reset();
        }
        return newest;
    });
}

}  // namespace acme::store
