#include "common/store/spool_failures.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/store/columns.hpp"

namespace acme::store {

void insert_task_exits(Database& db, long long job_id, const std::string& node, const std::vector<TaskExitRow>& exits) {
    if (exits.empty()) return;
    db.transaction([&] {
        auto insert = db.prepare(
            "INSERT OR REPLACE INTO task_exits (job_id, step_id, task_id, node, ts, wait_status, exit_code, signal) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
        for (const auto& e : exits) {
            insert.bind_all(job_id, e.step_id, e.task_id, node, e.ts, e.wait_status, e.exit_code, e.signal).run();
            insert.reset();
        }
    });
}

std::vector<int> task_wait_statuses(Database& db, long long job_id) {
    std::vector<int> out;
    auto q = db.prepare("SELECT wait_status FROM task_exits WHERE job_id = ?");
    q.bind(1, job_id);
    while (q.step()) out.push_back(static_cast<int>(q.column_int(0)));
    return out;
}

void insert_log_tail(Database& db, long long job_id, long long restart, const std::string& node,
                     const std::vector<std::string>& paths, const std::string& text) {
    db.transaction([&] {
        db.prepare("INSERT OR REPLACE INTO log_tails (job_id, restart, node, paths, bytes, text) VALUES (?, ?, ?, ?, ?, ?)")
            .bind_all(job_id, restart, node, nlohmann::json(paths).dump(), static_cast<long long>(text.size()), text)
            .run();
    });
}

std::optional<std::string> newest_log_tail(Database& db, long long job_id) {
    // Read-only readers open spools as they are, never migrating them.
    auto has_tails = db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'log_tails'");
    has_tails.step();
    if (has_tails.column_int(0) == 0) return std::nullopt;
    auto tail = db.prepare("SELECT text FROM log_tails WHERE job_id = ? ORDER BY restart DESC LIMIT 1");
    tail.bind_all(job_id);
    if (!tail.step()) return std::nullopt;
    return tail.column_text(0);
}

void insert_diagnosis(Database& db, long long job_id, const Diagnosis& d) {
    db.transaction([&] {
        db.prepare(
              "INSERT OR REPLACE INTO diagnoses (job_id, restart, node, ts, category, reason, confidence, evidence, "
              "action, rule) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
            .bind_all(job_id, d.restart, d.node, d.ts, d.category, d.reason, d.confidence, d.evidence_json, d.action,
                      d.rule)
            .run();
    });
}

namespace {

using D = Diagnosis;

// The evidence comes last: the log lines, often on overflow pages, are read only when asked for.
const Column<Diagnosis> kDiagnosisColumns[] = {
    field<D, &D::job_id>("job_id"),
    field<D, &D::restart>("restart"),
    field<D, &D::node>("node"),
    field<D, &D::ts>("ts"),
    field<D, &D::category>("category"),
    field<D, &D::reason>("reason"),
    field<D, &D::confidence>("confidence"),
    field<D, &D::action>("action"),
    field<D, &D::rule>("rule"),
    field<D, &D::evidence_json>("evidence"),
};

}  // namespace

std::string diagnosis_columns(const std::function<bool(std::string_view column)>& as_null) {
    return select_list(kDiagnosisColumns, as_null);
}

void read_diagnosis(const Statement& q, Diagnosis& into) { read_into(kDiagnosisColumns, q, into); }

std::vector<Diagnosis> job_diagnoses(Database& db, long long job_id) {
    const bool has_rule = table_columns(db, "diagnoses").count("rule") != 0;
    auto q = db.prepare(fmt::format("SELECT {} FROM diagnoses WHERE job_id = ?",
                                    diagnosis_columns([&](std::string_view c) { return c == "rule" && !has_rule; })));
    q.bind_all(job_id);
    std::vector<Diagnosis> out;
    while (q.step()) read_diagnosis(q, out.emplace_back());
    return out;
}

void insert_recovery(Database& db, long long job_id, long long restart, const std::string& node, double ts,
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

std::int64_t insert_health_check(Database& db, const std::string& node, double ts, long long job_id, bool passed,
                                 const std::string& detail) {
    std::int64_t row = 0;
    db.transaction([&] {
        db.prepare("INSERT INTO health_checks (node, ts, job_id, passed, detail) VALUES (?, ?, ?, ?, ?)")
            .bind_all(node, ts, job_id, passed ? 1 : 0, detail)
            .run();
        row = db.last_insert_rowid();
    });
    return row;
}

void update_health_check_detail(Database& db, std::int64_t row, const std::string& detail) {
    db.transaction([&] {
        db.prepare("UPDATE health_checks SET detail = ? WHERE rowid = ?").bind_all(detail, row).run();
    });
}

std::optional<HealthCheckRow> job_health_check(Database& db, long long job_id) {
    auto q = db.prepare("SELECT passed, detail FROM health_checks WHERE job_id = ? AND detail NOT LIKE 'drained by recovery:%' "
                        "ORDER BY ts DESC LIMIT 1");
    q.bind(1, job_id);
    if (!q.step()) return std::nullopt;
    return HealthCheckRow{q.column_int(0) != 0, q.column_text(1)};
}

}  // namespace acme::store
