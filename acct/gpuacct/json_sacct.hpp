// --json of the jobs view in sacct's layout (man gpuacct(1), JSON): see json_sacct.cpp.
#pragma once

#include <nlohmann/json.hpp>

#include "acct/gpuacct/views.hpp"

namespace acme::gpuacct {

// {"meta": ..., "errors": [], "jobs": [...]}: one sacct-style object per job of the context,
// each with "acme": that job's row of `rows` (render_json(table)'s rows, the fields -o selected).
nlohmann::json sacct_jobs_json(const Context& context, const Table& table, const nlohmann::json& rows);

}  // namespace acme::gpuacct
