#include "evalsched/store/pilots.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "evalsched/store/attempts.hpp"
#include "evalsched/store/columns.hpp"

namespace acme::evalsched {
namespace {

using store::Database;
using store::Statement;

const Column<PilotRow> kPilot[] = {
    {"id", [](PilotRow& p, const Statement& q, int i) { p.id = q.column_int(i); }},
    {"evaluation", [](PilotRow& p, const Statement& q, int i) { p.evaluation = q.column_int(i); }},
    {"gpus", [](PilotRow& p, const Statement& q, int i) { p.gpus = static_cast<int>(q.column_int(i)); }},
    {"steps", [](PilotRow& p, const Statement& q, int i) { p.steps = static_cast<int>(q.column_int(i)); }},
    {"node", [](PilotRow& p, const Statement& q, int i) { p.node = q.column_text(i); }},
    {"tag", [](PilotRow& p, const Statement& q, int i) { p.tag = q.column_text(i); }},
    {"state", [](PilotRow& p, const Statement& q, int i) { p.state = q.column_text(i); }},
    {"reason", [](PilotRow& p, const Statement& q, int i) { p.reason = q.column_text(i); }},
    {"job_id", [](PilotRow& p, const Statement& q, int i) { p.job_id = q.column_optional_int(i); }},
    {"time_min_s", [](PilotRow& p, const Statement& q, int i) { p.time_min_s = q.column_double(i); }},
    {"time_limit_s", [](PilotRow& p, const Statement& q, int i) { p.time_limit_s = q.column_double(i); }},
    {"submitted_at", [](PilotRow& p, const Statement& q, int i) { p.submitted_at = q.column_double(i); }},
    {"granted_s", [](PilotRow& p, const Statement& q, int i) { p.granted_s = q.column_optional_double(i); }},
    {"started_at", [](PilotRow& p, const Statement& q, int i) { p.started_at = q.column_optional_double(i); }},
};

std::vector<PilotRow> pilots_where(Database& db, const std::string& where) {
    std::vector<PilotRow> out;
    auto q = db.prepare(fmt::format("SELECT {} FROM pilots WHERE {} ORDER BY id", select_list(kPilot, ""), where));
    while (q.step()) out.push_back(read_row(kPilot, q));
    return out;
}

// step_lost's work, inside the caller's transaction.
void lose_step(Database& db, const AttemptRow& a, const std::string& why, double now) {
    db.prepare("UPDATE attempts SET state = 'lost', ended_at = ?, reason = ? WHERE id = ? AND state = 'running'").bind_all(now, why, a.id).run();
    if (db.changes() == 0) return;
    db.prepare("UPDATE trials SET state = 'pending', attempts = MAX(0, attempts - 1), reason = ? WHERE id = ? AND state = 'running'")
        .bind_all(why, a.trial)
        .run();
}

}  // namespace

double PilotRow::remaining_s(double now) const {
    const double limit = granted_s.value_or(time_limit_s);
    return std::max(0.0, limit - (started_at ? now - *started_at : 0.0));
}

std::string pilot_tag(const std::string& instance, std::int64_t evaluation, std::int64_t pilot) {
    return fmt::format("evalsched-{}-{}-p{}", instance, evaluation, pilot);
}

PilotRow begin_pilot(Database& db, std::int64_t evaluation, int gpus, const std::string& node, double time_min_s, double time_limit_s,
                     double now) {
    return db.transaction([&] {
        auto next = db.prepare("SELECT COALESCE(MAX(id), 0) + 1 FROM pilots");
        next.step();
        PilotRow p;
        p.id = next.column_int(0);
        p.evaluation = evaluation;
        p.gpus = gpus;
        p.node = node;
        p.tag = pilot_tag(instance_id(db), evaluation, p.id);
        p.state = "submitting";
        p.time_min_s = time_min_s;
        p.time_limit_s = time_limit_s;
        p.submitted_at = now;
        db.prepare("INSERT INTO pilots (id, evaluation, gpus, node, tag, state, time_min_s, time_limit_s, submitted_at)"
                   " VALUES (?, ?, ?, ?, ?, 'submitting', ?, ?, ?)")
            .bind_all(p.id, evaluation, gpus, node, p.tag, time_min_s, time_limit_s, now)
            .run();
        return p;
    });
}

void pilot_submitted(Database& db, const PilotRow& p, std::int64_t job_id) {
    db.transaction([&] {
        db.prepare("UPDATE pilots SET job_id = ?, state = 'queued' WHERE id = ? AND state = 'submitting'").bind_all(job_id, p.id).run();
    });
}

void pilot_never_submitted(Database& db, const PilotRow& p) {
    db.transaction([&] { db.prepare("DELETE FROM pilots WHERE id = ? AND state = 'submitting'").bind(1, p.id).run(); });
}

void pilot_running(Database& db, const PilotRow& p, const std::string& node, double granted_s, double started_at) {
    db.transaction([&] {
        db.prepare("UPDATE pilots SET state = 'running', node = CASE WHEN ? = '' THEN node ELSE ? END, granted_s = ?, started_at = ?"
                   " WHERE id = ? AND state IN ('submitting', 'queued')")
            .bind_all(node, node, granted_s, started_at, p.id)
            .run();
    });
}

void pilot_releasing(Database& db, const PilotRow& p, const std::string& why) {
    db.transaction([&] {
        db.prepare("UPDATE pilots SET state = 'releasing', reason = ? WHERE id = ? AND state IN ('submitting', 'queued', 'running')")
            .bind_all(why, p.id)
            .run();
    });
}

void pilot_ended(Database& db, const PilotRow& p, const std::string& how, double now) {
    db.transaction([&] {
        db.prepare("UPDATE pilots SET state = 'ended', ended_at = ?, reason = CASE WHEN reason = '' THEN ? ELSE reason || '; ' || ? END"
                   " WHERE id = ? AND state != 'ended'")
            .bind_all(now, how, how, p.id)
            .run();
        auto q = db.prepare(fmt::format("SELECT {} FROM attempts WHERE pilot = ? AND state = 'running'", attempt_columns()));
        q.bind(1, p.id);
        std::vector<AttemptRow> leased;
        while (q.step()) leased.push_back(attempt_from(q));
        for (const auto& a : leased) lose_step(db, a, fmt::format("its pilot {} ended mid-trial ({})", p.tag, how), now);
    });
}

std::optional<PilotRow> load_pilot(Database& db, std::int64_t id) {
    auto rows = pilots_where(db, fmt::format("id = {}", id));
    if (rows.empty()) return std::nullopt;
    return rows.front();
}

std::vector<PilotRow> open_pilots(Database& db) { return pilots_where(db, "state != 'ended'"); }

std::vector<PilotRow> pilots_of_inactive(Database& db, const std::vector<std::string>& states) {
    std::vector<PilotRow> out;
    for (const auto& s : states) {
        auto q = db.prepare(fmt::format("SELECT {} FROM pilots WHERE state = ? AND evaluation IN (SELECT id FROM evaluations WHERE state != 'active')"
                                        " ORDER BY id",
                                        select_list(kPilot, "")));
        q.bind(1, s);
        while (q.step()) out.push_back(read_row(kPilot, q));
    }
    return out;
}

AttemptRow begin_step(Database& db, const TrialRow& t, const PilotRow& p, double time_limit_s, double now) {
    return db.transaction([&] {
        auto cur = db.prepare("SELECT attempts FROM trials WHERE id = ?");
        cur.bind(1, t.id);
        cur.step();
        AttemptRow a;
        a.trial = t.id;
        // Numbers stay unique across lost attempts: the highest so far plus one.
        auto n = db.prepare("SELECT COALESCE(MAX(number), 0) + 1 FROM attempts WHERE trial = ?");
        n.bind(1, t.id);
        n.step();
        a.number = static_cast<int>(n.column_int(0));
        a.tag = attempt_tag(instance_id(db), t.evaluation, t.id, a.number);
        a.node = p.node;
        a.state = "running";
        a.submitted_at = now;
        a.job_id = p.job_id;
        a.pilot = p.id;
        db.prepare("INSERT INTO attempts (trial, number, tag, job_id, node, time_limit_s, state, submitted_at, pilot)"
                   " VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?)")
            .bind_all(a.trial, a.number, a.tag, p.job_id, p.node, time_limit_s, now, p.id)
            .run();
        a.id = db.last_insert_rowid();
        db.prepare("UPDATE trials SET state = 'running', attempts = attempts + 1, reason = '' WHERE id = ? AND state = 'pending'")
            .bind(1, t.id)
            .run();
        db.prepare("UPDATE pilots SET steps = steps + 1 WHERE id = ?").bind(1, p.id).run();
        return a;
    });
}

void step_id_recorded(Database& db, const AttemptRow& a, std::int64_t step_id) {
    db.transaction([&] { db.prepare("UPDATE attempts SET step_id = ? WHERE id = ?").bind_all(step_id, a.id).run(); });
}

void step_lost(Database& db, const AttemptRow& a, const std::string& why, double now) {
    db.transaction([&] { lose_step(db, a, why, now); });
}

std::vector<AttemptRow> open_steps(Database& db) {
    std::vector<AttemptRow> out;
    auto q = db.prepare(fmt::format("SELECT {} FROM attempts WHERE pilot IS NOT NULL AND state = 'running' ORDER BY id", attempt_columns()));
    while (q.step()) out.push_back(attempt_from(q));
    return out;
}

std::int64_t server_losses(Database& db, std::int64_t trial) {
    auto q = db.prepare("SELECT COUNT(*) FROM attempts WHERE trial = ? AND state = 'lost' AND reason LIKE '%''s server stopped answering'");
    q.bind(1, trial);
    return q.step() ? q.column_int(0) : 0;
}

}  // namespace acme::evalsched
