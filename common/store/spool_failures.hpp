// The node spool's failure tables (schema: spool.cpp): task exits handed over by slurmstepd,
// the log tails faultguard read, its diagnoses, what recovery did, the health gate's verdicts.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/store/database.hpp"

namespace acme::store {

struct TaskExitRow {
    long long step_id = 0, task_id = 0;
    double ts = 0;
    int wait_status = 0;              // raw wait(2) status
    std::optional<int> exit_code;     // when the task exited
    std::optional<int> signal;        // when a signal killed it
};
void insert_task_exits(Database& db, long long job_id, const std::string& node, const std::vector<TaskExitRow>& exits);
std::vector<int> task_wait_statuses(Database& db, long long job_id);

// One row per (job, restart): a requeued job's next run gets its own.
void insert_log_tail(Database& db, long long job_id, long long restart, const std::string& node,
                     const std::vector<std::string>& paths, const std::string& text);
// The newest run's log tail; nullopt when none was stored, or the spool predates log tails (v3).
std::optional<std::string> newest_log_tail(Database& db, long long job_id);

// One diagnoses row: faultguard's diagnosis of one run of a job on one node.
struct Diagnosis {
    std::int64_t job_id = 0, restart = 0;
    std::string node, category, reason, action, rule;
    double ts = 0, confidence = 0;
    std::string evidence_json;  // the evidence lines, a JSON array: read by job_diagnoses only
};
void insert_diagnosis(Database& db, long long job_id, const Diagnosis& d);

// The table's one reader: every query on diagnoses selects diagnosis_columns(), job_id first,
// and reads each row with read_diagnosis. `as_null` names the columns to select as NULL (not
// wanted, or absent from an older spool: rule came with v3); they read as "".
std::string diagnosis_columns(const std::function<bool(std::string_view column)>& as_null);
void read_diagnosis(const Statement& q, Diagnosis& into);

// Every run's, on this node (rule empty on a spool older than v3).
std::vector<Diagnosis> job_diagnoses(Database& db, long long job_id);

void insert_recovery(Database& db, long long job_id, long long restart, const std::string& node, double ts,
                     bool drained, const std::string& drain_reason, bool requeued, const std::string& outcome);
// Returns the row's id, for update_health_check_detail.
std::int64_t insert_health_check(Database& db, const std::string& node, double ts, long long job_id, bool passed,
                                 const std::string& detail);
// Rewrites one row's detail (the gate records its verdict before acting, then what it did).
void update_health_check_detail(Database& db, std::int64_t row, const std::string& detail);
struct HealthCheckRow {
    bool passed = false;
    std::string detail;
};
// The pre-job gate's newest verdict for this job on this node (the current run's; recovery's
// drain rows are not the gate's): nullopt when it did not run.
std::optional<HealthCheckRow> job_health_check(Database& db, long long job_id);

}  // namespace acme::store
