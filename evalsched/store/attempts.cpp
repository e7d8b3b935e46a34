#include "evalsched/store/attempts.hpp"

#include <fmt/format.h>

#include "evalsched/store/evaluations.hpp"
#include "evalsched/store/metric_jobs.hpp"
#include "evalsched/store/priors.hpp"

namespace acme::evalsched {

using store::Database;

std::string attempt_tag(const std::string& instance, std::int64_t evaluation, std::int64_t trial, int number) {
    return fmt::format("evalsched-{}-{}-{}-{}", instance, evaluation, trial, number);
}

std::vector<TrialRow> trials_in_state(Database& db, const std::vector<std::string>& states) {
    std::vector<TrialRow> out;
    for (const auto& s : states) {
        auto q = db.prepare(fmt::format("SELECT {} FROM trials WHERE state = ? ORDER BY id", trial_columns()));
        q.bind(1, s);
        while (q.step()) out.push_back(trial_from(q));
    }
    return out;
}

std::optional<TrialRow> load_trial(Database& db, std::int64_t id) {
    auto q = db.prepare(fmt::format("SELECT {} FROM trials WHERE id = ?", trial_columns()));
    q.bind(1, id);
    if (!q.step()) return std::nullopt;
    return trial_from(q);
}

std::vector<AttemptRow> open_attempts(Database& db) {
    std::vector<AttemptRow> out;
    auto q = db.prepare(fmt::format("SELECT {} FROM attempts WHERE state IN ('submitting', 'queued', 'running') AND pilot IS NULL ORDER BY id", attempt_columns()));
    while (q.step()) out.push_back(attempt_from(q));
    return out;
}

std::vector<std::pair<std::int64_t, std::string>> staged_nodes(Database& db) {
    std::vector<std::pair<std::int64_t, std::string>> out;
    auto q = db.prepare(
        "SELECT DISTINCT evaluation, node FROM stagings"
        " UNION SELECT DISTINCT t.evaluation, a.node FROM attempts a JOIN trials t ON t.id = a.trial"
        "   WHERE a.state IN ('submitting', 'queued', 'running') AND a.node != ''");
    while (q.step()) out.emplace_back(q.column_int(0), q.column_text(1));
    return out;
}

AttemptRow begin_attempt(Database& db, const TrialRow& t, const std::string& node, double time_limit_s, double now) {
    return db.transaction([&] {
        AttemptRow a;
        a.trial = t.id;
        a.number = t.attempts + 1;
        a.tag = attempt_tag(instance_id(db), t.evaluation, t.id, a.number);
        a.node = node;
        a.state = "submitting";
        a.submitted_at = now;
        db.prepare("INSERT INTO attempts (trial, number, tag, node, time_limit_s, state, submitted_at) VALUES (?, ?, ?, ?, ?, 'submitting', ?)")
            .bind_all(a.trial, a.number, a.tag, node, time_limit_s, now)
            .run();
        a.id = db.last_insert_rowid();
        db.prepare("UPDATE trials SET state = 'submitting', attempts = ? WHERE id = ?").bind_all(a.number, t.id).run();
        return a;
    });
}

void attempt_submitted(Database& db, const AttemptRow& a, std::int64_t job_id) {
    db.transaction([&] {
        db.prepare("UPDATE attempts SET job_id = ?, state = 'queued' WHERE id = ? AND state = 'submitting'")
            .bind_all(job_id, a.id)
            .run();
        db.prepare("UPDATE trials SET state = 'queued' WHERE id = ? AND state = 'submitting'").bind(1, a.trial).run();
    });
}

void attempt_never_submitted(Database& db, const AttemptRow& a, const std::string& why) {
    db.transaction([&] {
        db.prepare("DELETE FROM attempts WHERE id = ?").bind(1, a.id).run();
        db.prepare("UPDATE trials SET state = 'pending', attempts = attempts - 1, reason = ? WHERE id = ? AND state = 'submitting'")
            .bind_all(why, a.trial)
            .run();
    });
}

void attempt_withdrawn(Database& db, const AttemptRow& a, const std::string& why) {
    db.transaction([&] {
        db.prepare("DELETE FROM attempts WHERE id = ? AND state IN ('submitting', 'queued')").bind(1, a.id).run();
        if (db.changes() == 0) return;
        db.prepare("UPDATE trials SET state = 'pending', attempts = attempts - 1, reason = ? WHERE id = ? AND state IN ('submitting', 'queued')")
            .bind_all(why, a.trial)
            .run();
    });
}

void trial_cannot_start(Database& db, const TrialRow& t, const std::string& why, double now) {
    db.transaction([&] {
        db.prepare("UPDATE trials SET state = 'failed', reason = ? WHERE id = ? AND state = 'pending'").bind_all(why, t.id).run();
        close_if_finished(db, t.evaluation, now);
    });
}

void attempt_running(Database& db, const AttemptRow& a, const std::string& node) {
    db.transaction([&] {
        db.prepare("UPDATE attempts SET state = 'running', node = ? WHERE id = ? AND state IN ('queued', 'submitting')").bind_all(node, a.id).run();
        db.prepare("UPDATE trials SET state = 'running' WHERE id = ? AND state IN ('queued', 'submitting')").bind(1, a.trial).run();
    });
}

void finish_attempt(Database& db, const AttemptRow& a, const Outcome& o, const std::string& size_class, double now) {
    db.transaction([&] {
        auto tq = db.prepare(fmt::format("SELECT {} FROM trials WHERE id = ?", trial_columns()));
        tq.bind(1, a.trial);
        if (!tq.step()) return;
        const TrialRow t = trial_from(tq);
        auto eq = db.prepare("SELECT checkpoint, name FROM evaluations WHERE id = ?");
        eq.bind(1, t.evaluation);
        eq.step();
        const std::string checkpoint = eq.column_text(1) + "/" + eq.column_text(0);
        const char* astate = o.cancelled ? "cancelled" : o.success ? "done" : "failed";
        db.prepare("UPDATE attempts SET state = ?, ended_at = ?, exit_code = ?, category = ?, reason = ?, evidence = ?, log = ?,"
                   " node = CASE WHEN ? = '' THEN node ELSE ? END WHERE id = ?")
            .bind_all(astate, now, o.exit_code, o.category, o.reason, o.evidence, o.log, o.node, o.node, a.id)
            .run();
        if (o.stage)
            db.prepare("INSERT INTO stagings (evaluation, node, copied, bytes, seconds, at) VALUES (?, ?, ?, ?, ?, ?)")
                .bind_all(t.evaluation, o.node, o.stage->copied ? 1 : 0, o.stage->bytes, o.stage->seconds, now)
                .run();
        if (o.stage && o.stage->copied && o.stage->bytes > 0 && o.stage->seconds > 0)
            store::record_model_load(db, {o.node, o.stage->bytes, o.stage->seconds, checkpoint, now});
        if (t.state == "cancelled" || o.cancelled) {
            db.prepare("UPDATE trials SET state = 'cancelled' WHERE id = ?").bind(1, t.id).run();
        } else if (o.success) {
            auto ins = db.prepare("INSERT OR REPLACE INTO results (evaluation, dataset, metric, value, info) VALUES (?, ?, ?, ?, ?)");
            for (const auto& s : o.scores) {
                ins.reset();
                // A shard's score is averaged into the dataset's: shards are equal slices.
                const double v = t.num_shards > 1 ? s.value / t.num_shards : s.value;
                if (t.num_shards > 1) {
                    auto cur = db.prepare("SELECT value FROM results WHERE evaluation = ? AND dataset = ? AND metric = ?");
                    cur.bind_all(t.evaluation, s.dataset, s.metric);
                    ins.bind_all(t.evaluation, s.dataset, s.metric, v + (cur.step() ? cur.column_double(0) : 0), s.info).run();
                } else {
                    ins.bind_all(t.evaluation, s.dataset, s.metric, v, s.info).run();
                }
            }
            if (o.run_s && *o.run_s > 0 && t.parts().size() == 1)
                store::record_prior_run(db, {t.parts().front(), size_class, t.gpus, *o.run_s, 1.0 / t.num_shards, checkpoint, o.node, now});
            if (o.startup_s && *o.startup_s > 0) store::record_startup(db, {size_class, t.gpus, *o.startup_s, checkpoint, o.node, now});
            db.prepare("UPDATE trials SET state = 'done', reason = '', evidence = '', log = '' WHERE id = ?").bind(1, t.id).run();
            // What /metrics compares the prediction with (store v6 totals it once per trial).
            if (o.run_s && *o.run_s > 0) db.prepare("UPDATE trials SET run_s = ? WHERE id = ?").bind_all(*o.run_s, t.id).run();
        } else if (o.retry) {
            const std::string excluded = add_node(t.excluded_nodes, o.exclude_node);
            db.prepare("UPDATE trials SET state = 'pending', excluded_nodes = ?, reason = ?, evidence = ?, log = ? WHERE id = ?")
                .bind_all(excluded, fmt::format("retrying after {} ({})", o.reason, o.category), o.evidence, o.log, t.id)
                .run();
        } else {
            db.prepare("UPDATE trials SET state = 'failed', reason = ?, evidence = ?, log = ? WHERE id = ?")
                .bind_all(fmt::format("{} ({})", o.reason, o.category), o.evidence, o.log, t.id)
                .run();
            stop_metric_jobs_of(db, t, fmt::format("inference failed: {} ({} ({}))", t.trial_key, o.reason, o.category), now);
        }
        close_if_finished(db, t.evaluation, now);
    });
}

std::vector<AttemptRow> attempts_to_cancel(Database& db) {
    std::vector<AttemptRow> out;
    auto q = db.prepare(
        "SELECT " + attempt_columns("a") +
        " FROM attempts a JOIN trials t ON t.id = a.trial WHERE t.state = 'cancelled' AND a.state IN ('submitting', 'queued', 'running') AND a.pilot IS NULL");
    while (q.step()) out.push_back(attempt_from(q));
    return out;
}

void attempt_cancelled(Database& db, const AttemptRow& a, double now) {
    db.transaction([&] {
        db.prepare("UPDATE attempts SET state = 'cancelled', ended_at = ? WHERE id = ?").bind_all(now, a.id).run();
    });
}

}  // namespace acme::evalsched
