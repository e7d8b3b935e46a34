// The node spool's failure tables (schema: spool.cpp): task exits handed over by slurmstepd,
// the log tails faultguard read, its diagnoses, what recovery did, the health gate's verdicts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
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

struct DiagnosisRow {
    long long restart = 0;
    std::string node;
    double ts = 0;
    std::string category, reason;
    double confidence = 0;
    std::string evidence_json, action, rule;
};
void insert_diagnosis(Database& db, long long job_id, const DiagnosisRow& d);
// Every run's, on this node (rule is empty: not read back).
std::vector<DiagnosisRow> job_diagnoses(Database& db, long long job_id);

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
