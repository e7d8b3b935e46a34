// The node spool's stall verdicts (schema: spool.cpp, v6): written by the sampler when a running
// job stopped making progress, read by faultguard's epilog (diagnosis, recovery, the record) and
// the reports.
#pragma once

#include <optional>
#include <string>

#include "common/store/database.hpp"

namespace acme::store {

struct StallRow {
    long long restart = 0;
    std::string node;        // the writer
    double ts = 0, since = 0;
    std::string named_node;  // empty: none
    bool hardware = false;
    std::string evidence, action;
    bool withdrawn = false;  // progress resumed before any cancel (spool v7): not a stall after all
};

// One row per (job, restart); a later call for the same run replaces it (the action grows).
void upsert_stall(Database& db, long long job_id, const StallRow& row);
// The run's verdict on this node; nullopt when none (or the spool predates v6).
std::optional<StallRow> job_stall(Database& db, long long job_id, long long restart);

}  // namespace acme::store
