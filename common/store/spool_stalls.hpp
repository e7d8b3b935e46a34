// The node spool's stall verdicts (schema: spool.cpp, v6): written by the sampler when a running
// job stopped making progress, read by faultguard's epilog (diagnosis, recovery, the record) and
// the reports.
#pragma once

#include <optional>
#include <string>
#include <string_view>

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

// The sampler's mark, in the spool's run directory, that it cancelled this job for a stall: on a
// node where the job had no task (a batch script's other nodes) slurmd's epilog sees exit code
// 0:0 and task exits of 0 only, and would let the node go before the diagnosis and the recovery
// it sets off have decided (faultguard's job_script.cpp). The epilog's helper removes it.
inline std::string stall_cancel_mark_path(std::string_view spool, std::string_view node, long long job_id) {
    std::string p;
    p.append(spool).append("/run/").append(node).append(".").append(std::to_string(job_id)).append(".stall_cancelled");
    return p;
}

// One row per (job, restart); a later call for the same run replaces it (the action grows).
void upsert_stall(Database& db, long long job_id, const StallRow& row);
// The run's verdict on this node; nullopt when none (or the spool predates v6).
std::optional<StallRow> job_stall(Database& db, long long job_id, long long restart);

}  // namespace acme::store
