#include "evalsched/store/stage_jobs.hpp"

#include <fmt/format.h>

#include "evalsched/store/priors.hpp"
#include "evalsched/store/rows.hpp"

namespace acme::evalsched {

using store::Database;

namespace {

constexpr const char* kColumns = "id, evaluation, node, number, state, tag, job_id, reason";

StageRow stage_from(const store::Statement& q) {
    StageRow s;
    s.id = q.column_int(0);
    s.evaluation = q.column_int(1);
    s.node = q.column_text(2);
    s.number = static_cast<int>(q.column_int(3));
    s.state = q.column_text(4);
    s.tag = q.column_text(5);
    if (!q.is_null(6)) s.job_id = q.column_int(6);
    s.reason = q.column_text(7);
    return s;
}

}  // namespace

StagePlan stage_plan(const std::optional<StageRow>& newest) {
    StagePlan p;
    if (!newest) {
        p.kind = StagePlan::Kind::submit;
        return p;
    }
    const StageRow& s = *newest;
    if (s.state == "done") return p;
    if ((s.state == "queued" || s.state == "running") && s.job_id) {
        p.kind = StagePlan::Kind::wait;
        p.job_id = *s.job_id;
        return p;
    }
    if (s.state == "failed") {
        if (s.number >= kStageTries) return p;
        p.kind = StagePlan::Kind::submit;
        p.number = s.number + 1;
        return p;
    }
    p.kind = StagePlan::Kind::unavailable;
    return p;
}

std::string stage_tag(const std::string& instance, std::int64_t evaluation, std::int64_t row) {
    return fmt::format("evalsched-{}-{}-stage{}", instance, evaluation, row);
}

std::optional<StageRow> newest_stage(Database& db, std::int64_t evaluation, const std::string& node) {
    auto q = db.prepare(fmt::format("SELECT {} FROM stage_jobs WHERE evaluation = ? AND node = ? ORDER BY number DESC LIMIT 1", kColumns));
    q.bind_all(evaluation, node);
    if (!q.step()) return std::nullopt;
    return stage_from(q);
}

std::optional<StageRow> load_stage_row(Database& db, std::int64_t id) {
    auto q = db.prepare(fmt::format("SELECT {} FROM stage_jobs WHERE id = ?", kColumns));
    q.bind(1, id);
    if (!q.step()) return std::nullopt;
    return stage_from(q);
}

std::vector<StageRow> open_stages(Database& db) {
    std::vector<StageRow> out;
    auto q = db.prepare(fmt::format("SELECT {} FROM stage_jobs WHERE state IN ('submitting', 'queued', 'running') ORDER BY id", kColumns));
    while (q.step()) out.push_back(stage_from(q));
    return out;
}

std::vector<std::pair<std::int64_t, std::string>> stage_given_up(Database& db) {
    std::vector<std::pair<std::int64_t, std::string>> out;
    auto q = db.prepare(
        "SELECT s.evaluation, s.node FROM stage_jobs s JOIN evaluations e ON e.id = s.evaluation"
        " WHERE e.state = 'active' AND s.state = 'failed' AND s.number >= ?");
    q.bind(1, kStageTries);
    while (q.step()) out.emplace_back(q.column_int(0), q.column_text(1));
    return out;
}

StageRow begin_stage(Database& db, std::int64_t evaluation, const std::string& node, int number, double now) {
    return db.transaction([&] {
        StageRow s;
        s.evaluation = evaluation;
        s.node = node;
        s.number = number;
        s.state = "submitting";
        // The row id names the tag: chosen inside the transaction (as begin_pilot does), so the
        // row is written once, with its final tag.
        auto next = db.prepare("SELECT COALESCE(MAX(id), 0) + 1 FROM stage_jobs");
        next.step();
        s.id = next.column_int(0);
        s.tag = stage_tag(instance_id(db), evaluation, s.id);
        db.prepare("INSERT INTO stage_jobs (id, evaluation, node, number, state, tag, submitted_at) VALUES (?, ?, ?, ?, 'submitting', ?, ?)")
            .bind_all(s.id, evaluation, node, number, s.tag, now)
            .run();
        return s;
    });
}

void stage_submitted(Database& db, const StageRow& s, std::int64_t job_id) {
    db.prepare("UPDATE stage_jobs SET job_id = ?, state = 'queued' WHERE id = ? AND state = 'submitting'").bind_all(job_id, s.id).run();
}

void stage_lost(Database& db, const StageRow& s) {
    db.prepare("DELETE FROM stage_jobs WHERE id = ? AND state = 'submitting'").bind(1, s.id).run();
}

void stage_refused(Database& db, const StageRow& s, const std::string& why, double now) {
    db.prepare("UPDATE stage_jobs SET state = 'failed', reason = ?, ended_at = ? WHERE id = ? AND state = 'submitting'")
        .bind_all(why, now, s.id)
        .run();
}

void stage_running(Database& db, const StageRow& s, const std::string& node) {
    db.prepare("UPDATE stage_jobs SET state = 'running', node = CASE WHEN ? = '' THEN node ELSE ? END WHERE id = ? AND state IN ('submitting', 'queued')")
        .bind_all(node, node, s.id)
        .run();
}

void finish_stage(Database& db, const StageRow& s, const StageOutcome& o, const std::string& checkpoint, double now) {
    db.transaction([&] {
        db.prepare("UPDATE stage_jobs SET state = ?, reason = ?, ended_at = ? WHERE id = ? AND state IN ('submitting', 'queued', 'running')")
            .bind_all(o.ok ? "done" : "failed", o.ok ? std::string() : o.reason, now, s.id)
            .run();
        if (!o.recorded) return;
        db.prepare("INSERT INTO stagings (evaluation, node, copied, bytes, seconds, at) VALUES (?, ?, ?, ?, ?, ?)")
            .bind_all(s.evaluation, s.node, o.copied ? 1 : 0, o.bytes, o.seconds, now)
            .run();
        if (o.copied && o.bytes > 0 && o.seconds > 0) store::record_model_load(db, {s.node, o.bytes, o.seconds, checkpoint, now});
    });
}

std::vector<StageRow> stages_to_kill(Database& db) {
    std::vector<StageRow> out;
    auto q = db.prepare(fmt::format(
        "SELECT {} FROM stage_jobs WHERE state IN ('submitting', 'queued', 'running')"
        " AND evaluation IN (SELECT id FROM evaluations WHERE state != 'active') ORDER BY id",
        kColumns));
    while (q.step()) out.push_back(stage_from(q));
    return out;
}

void stage_killed(Database& db, const StageRow& s, double now) {
    db.prepare("UPDATE stage_jobs SET state = 'cancelled', ended_at = ? WHERE id = ? AND state IN ('submitting', 'queued', 'running')")
        .bind_all(now, s.id)
        .run();
}

}  // namespace acme::evalsched
