#include "spank/faultguard/core/spool_records.hpp"

#include <nlohmann/json.hpp>

#include "common/diagnose/diagnosis_json.hpp"

namespace acme::faultguard {

void record_recovery(store::Database& db, long long job_id, long long restart, const std::string& node, double ts,
                     bool drained, const std::string& drain_reason, bool requeued, const std::string& outcome) {
    db.transaction([&] {
        db.prepare("INSERT OR REPLACE INTO recoveries (job_id, restart, node, ts, drained, drain_reason, requeued, outcome) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
            .bind_all(job_id, restart, node, ts, drained ? 1 : 0,
                      drain_reason.empty() ? std::optional<std::string>() : std::optional(drain_reason), requeued ? 1 : 0,
                      outcome)
            .run();
    });
}

void record_health_check(store::Database& db, const std::string& node, double ts, long long job_id, bool passed,
                         const std::string& detail) {
    db.transaction([&] {
        db.prepare("INSERT INTO health_checks (node, ts, job_id, passed, detail) VALUES (?, ?, ?, ?, ?)")
            .bind_all(node, ts, job_id, passed ? 1 : 0, detail)
            .run();
    });
}

std::string exit_code_text(int wait_status) {
    const auto s = diagnose::from_wait_status(wait_status);
    return std::to_string(s.exit_code) + ":" + std::to_string(s.signal);
}

void record_job(store::Database& db, const JobRow& r) {
    auto opt_text = [](const std::string& s) { return s.empty() ? std::optional<std::string>() : std::optional(s); };
    auto opt_time = [](double t) { return t > 0 ? std::optional(t) : std::optional<double>(); };
    db.transaction([&] {
        db.prepare(R"sql(
            INSERT INTO jobs (job_id, uid, gid, node, gpus, user, account, partition, name, job_type, job_type_source,
                nodelist, num_nodes, gpus_total, submit_time, start_time, end_time, state, exit_code,
                derived_exit_code, restarts, batch_host)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22)
            ON CONFLICT (job_id) DO UPDATE SET uid = excluded.uid, gid = excluded.gid,
                gpus = COALESCE(excluded.gpus, jobs.gpus), user = excluded.user, account = excluded.account,
                partition = excluded.partition, name = excluded.name, job_type = excluded.job_type,
                job_type_source = excluded.job_type_source, nodelist = excluded.nodelist,
                num_nodes = excluded.num_nodes, gpus_total = excluded.gpus_total,
                submit_time = excluded.submit_time, start_time = excluded.start_time,
                end_time = excluded.end_time, state = excluded.state, exit_code = excluded.exit_code,
                derived_exit_code = excluded.derived_exit_code, restarts = excluded.restarts,
                batch_host = excluded.batch_host)sql")
            .bind_all(r.job_id, r.uid, r.gid, r.node, opt_text(r.gpus), opt_text(r.user), opt_text(r.account),
                      opt_text(r.partition), opt_text(r.name), r.job_type, r.job_type_source, opt_text(r.nodelist),
                      r.num_nodes, r.gpus_total, opt_time(r.submit_time), opt_time(r.start_time), opt_time(r.end_time),
                      opt_text(r.state), opt_text(r.exit_code), opt_text(r.derived_exit_code), r.restarts,
                      opt_text(r.batch_host))
            .run();
    });
}

void record_task_exits(store::Database& db, long long job_id, const std::string& node, const std::vector<TaskExit>& exits) {
    if (exits.empty()) return;
    db.transaction([&] {
        auto insert = db.prepare(
            "INSERT OR REPLACE INTO task_exits (job_id, step_id, task_id, node, ts, wait_status, exit_code, signal) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
        for (const auto& e : exits) {
            const auto status = diagnose::from_wait_status(e.wait_status);
            insert
                .bind_all(job_id, e.step_id, e.task_id, node, e.ts, e.wait_status,
                          status.signal ? std::optional<int>() : std::optional<int>(status.exit_code),
                          status.signal ? std::optional<int>(status.signal) : std::optional<int>())
                .run();
            insert.reset();
        }
    });
}

std::vector<int> task_wait_statuses(store::Database& db, long long job_id) {
    std::vector<int> out;
    auto q = db.prepare("SELECT wait_status FROM task_exits WHERE job_id = ?");
    q.bind(1, job_id);
    while (q.step()) out.push_back(static_cast<int>(q.column_int(0)));
    return out;
}

std::vector<diagnose::GpuEvent> job_gpu_events(store::Database& db, long long job_id) {
    std::vector<diagnose::GpuEvent> out;
    auto q = db.prepare("SELECT gpu, kind, code, ts, detail FROM gpu_events WHERE job_id = ? ORDER BY ts");
    q.bind(1, job_id);
    while (q.step()) {
        diagnose::GpuEvent e;
        e.gpu = static_cast<int>(q.column_int(0));
        e.kind = q.column_text(1);
        e.code = q.column_optional_int(2);
        e.ts = q.column_double(3);
        e.detail = q.column_text(4);
        out.push_back(std::move(e));
    }
    return out;
}

void record_log_tail(store::Database& db, long long job_id, long long restart, const std::string& node,
                     const std::vector<std::string>& paths, const std::string& text) {
    db.transaction([&] {
        db.prepare("INSERT OR REPLACE INTO log_tails (job_id, restart, node, paths, bytes, text) VALUES (?, ?, ?, ?, ?, ?)")
            .bind_all(job_id, restart, node, nlohmann::json(paths).dump(), static_cast<long long>(text.size()), text)
            .run();
    });
}

void record_diagnosis(store::Database& db, long long job_id, long long restart, const std::string& node, double ts,
                      const diagnose::Diagnosis& d) {
    db.transaction([&] {
        db.prepare(
              "INSERT OR REPLACE INTO diagnoses (job_id, restart, node, ts, category, reason, confidence, evidence, "
              "action, rule) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
            .bind_all(job_id, restart, node, ts, diagnose::to_string(d.category), d.reason, d.confidence,
                      diagnose::evidence_json(d), diagnose::to_string(d.action), d.rule)
            .run();
    });
}

}  // namespace acme::faultguard
