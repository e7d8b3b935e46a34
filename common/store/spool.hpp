// The node spool: one SQLite file per node (DESIGN.md "Stores"), written by that node's
// plugins and sampler, read by gpuacct and faultdiag. This file owns its schema.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "common/store/database.hpp"
#include "common/store/migrations.hpp"
#include "common/util/install_paths.hpp"

namespace acme::store {

inline constexpr std::string_view kDefaultSpoolDir = paths::kSpoolDir;

// The spool's migrations, oldest first.
std::span<const Migration> spool_migrations();

// <dir>/<node>.db. The node name must be a plain Slurm node name (no '/'); throws otherwise.
std::string spool_path(std::string_view dir, std::string_view node);

// Opens (creating if needed) a node spool and brings its schema up to date.
Database open_spool(const std::string& path);

// Opens an existing spool for reading only; never creates or migrates it.
Database open_spool_read_only(const std::string& path);

}  // namespace acme::store
