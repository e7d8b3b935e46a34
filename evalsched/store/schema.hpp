// evalschedd's own SQLite file (DESIGN.md "Stores"): its schema as a numbered migration list.
// v1 holds the priors (priors.hpp); v2 on add evaluations, trials, attempts and results, and
// later versions what the daemon's jobs came to need. Every statement on these tables lives
// in evalsched/store, one file per table or reader, so the schema has one owner.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "common/store/database.hpp"
#include "common/store/migrations.hpp"
#include "common/util/install_paths.hpp"

namespace acme::store {

inline constexpr std::string_view kDefaultEvalschedDb = paths::kEvalschedDb;

std::span<const Migration> evalsched_migrations();

// Opens (creating if needed) evalschedd's database and brings its schema up to date.
Database open_evalsched_store(const std::string& path);

}  // namespace acme::store
