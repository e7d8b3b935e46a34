#include "spank/faultguard/core/spool_records.hpp"

#include "common/diagnose/diagnosis_json.hpp"
#include "common/store/spool_failures.hpp"
#include "common/store/spool_gpu.hpp"

namespace acme::faultguard {

void record_recovery(store::Database& db, long long job_id, long long restart, const std::string& node, double ts,
                     bool drained, const std::string& drain_reason, bool requeued, const std::string& outcome) {
    store::insert_recovery(db, job_id, restart, node, ts, drained, drain_reason, requeued, outcome);
}

std::int64_t record_health_check(store::Database& db, const std::string& node, double ts, long long job_id,
                                 bool passed, const std::string& detail) {
    return store::insert_health_check(db, node, ts, job_id, passed, detail);
}

void amend_health_check(store::Database& db, std::int64_t row, const std::string& detail) {
    store::update_health_check_detail(db, row, detail);
}

std::string exit_code_text(int wait_status) {
    const auto s = diagnose::from_wait_status(wait_status);
    return std::to_string(s.exit_code) + ":" + std::to_string(s.signal);
}

void record_job(store::Database& db, const JobRow& r) { store::upsert_job_record(db, r); }

void record_task_exits(store::Database& db, long long job_id, const std::string& node, const std::vector<TaskExit>& exits) {
    std::vector<store::TaskExitRow> rows;
    rows.reserve(exits.size());
    for (const auto& e : exits) {
        const auto status = diagnose::from_wait_status(e.wait_status);
        rows.push_back({e.step_id, e.task_id, e.ts, e.wait_status,
                        status.signal ? std::optional<int>() : std::optional<int>(status.exit_code),
                        status.signal ? std::optional<int>(status.signal) : std::optional<int>()});
    }
    store::insert_task_exits(db, job_id, node, rows);
}

std::vector<int> task_wait_statuses(store::Database& db, long long job_id) { return store::task_wait_statuses(db, job_id); }

std::vector<diagnose::GpuEvent> job_gpu_events(store::Database& db, long long job_id) {
    std::vector<diagnose::GpuEvent> out;
    for (auto& row : store::job_gpu_events(db, job_id)) {
        diagnose::GpuEvent e;
        e.gpu = row.gpu;
        e.kind = std::move(row.kind);
        e.code = row.code;
        e.ts = row.ts;
        e.detail = std::move(row.detail);
        out.push_back(std::move(e));
    }
    return out;
}

void record_log_tail(store::Database& db, long long job_id, long long restart, const std::string& node,
                     const std::vector<std::string>& paths, const std::string& text) {
    store::insert_log_tail(db, job_id, restart, node, paths, text);
}

void record_diagnosis(store::Database& db, long long job_id, long long restart, const std::string& node, double ts,
                      const diagnose::Diagnosis& d) {
    store::insert_diagnosis(db, job_id,
                            {.restart = restart,
                             .node = node,
                             .category = std::string(diagnose::to_string(d.category)),
                             .reason = d.reason,
                             .action = std::string(diagnose::to_string(d.action)),
                             .rule = d.rule,
                             .ts = ts,
                             .confidence = d.confidence,
                             .evidence_json = diagnose::evidence_json(d)});
}

}  // namespace acme::faultguard
