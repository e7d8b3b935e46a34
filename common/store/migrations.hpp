// Numbered schema migrations. Each store declares its list once; migrate() applies the ones a
// file has not seen yet, in order, each recorded in schema_version in the same transaction as
// its DDL. Schema changes happen only here: append a migration, never edit a shipped one.
#pragma once

#include <span>
#include <string_view>

#include "common/store/database.hpp"

namespace acme::store {

struct Migration {
    int version;             // 1, 2, 3 ... with no gaps
    std::string_view name;   // one line, recorded beside the version
    std::string_view sql;    // DDL; may hold several statements
};

// Brings db up to the newest version in `migrations` and returns that version. Safe to call
// from several processes at once: the whole upgrade runs under one write lock. A file whose
// version is newer than this build knows is refused rather than touched.
int migrate(Database& db, std::span<const Migration> migrations);

// The version recorded in db, 0 for a fresh file.
int schema_version(Database& db);

}  // namespace acme::store
