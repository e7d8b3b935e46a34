#include "evalsched/store/metric_jobs.hpp"

#include <fmt/format.h>

#include "evalsched/store/evaluations.hpp"

namespace acme::evalsched {

using store::Database;

std::vector<MetricRow> metrics_in_state(Database& db, const std::vector<std::string>& states) {
    std::vector<MetricRow> out;
    for (const auto& s : states) {
        auto q = db.prepare(fmt::format("SELECT {} FROM metric_jobs WHERE state = ? ORDER BY id", metric_columns()));
        q.bind(1, s);
        while (q.step()) out.push_back(metric_from(q));
    }
    auto t = db.prepare("SELECT trial FROM metric_trials WHERE metric = ? ORDER BY trial");
    for (auto& m : out) {
        t.reset();
        t.bind(1, m.id);
        while (t.step()) m.trials.push_back(t.column_int(0));
    }
    return out;
}

std::set<std::string> metric_datasets(Database& db, std::int64_t evaluation) {
    std::set<std::string> out;
    auto q = db.prepare("SELECT dataset FROM metric_jobs WHERE evaluation = ?");
    q.bind(1, evaluation);
    while (q.step()) out.insert(q.column_text(0));
    return out;
}

std::vector<MetricTrialState> metric_trial_states(Database& db, const MetricRow& m) {
    std::vector<MetricTrialState> out;
    auto q = db.prepare(
        "SELECT t.trial_key, t.state, t.reason, (SELECT a.job_id FROM attempts a WHERE a.trial = t.id"
        "   AND a.state IN ('queued', 'running') AND a.pilot IS NULL ORDER BY a.number DESC LIMIT 1)"
        " FROM metric_trials x JOIN trials t ON t.id = x.trial WHERE x.metric = ? ORDER BY t.id");
    q.bind(1, m.id);
    while (q.step()) out.push_back({q.column_text(0), q.column_text(1), q.column_text(2), q.column_optional_int(3)});
    return out;
}

std::string metric_tag(const std::string& instance, std::int64_t evaluation, std::int64_t metric, int submission) {
    return fmt::format("evalsched-{}-{}-m{}-{}", instance, evaluation, metric, submission);
}

MetricRow begin_metric(Database& db, const MetricRow& m, double now) {
    return db.transaction([&] {
        MetricRow out = m;
        out.submissions = m.submissions + 1;
        out.tag = metric_tag(instance_id(db), m.evaluation, m.id, out.submissions);
        out.state = "submitting";
        out.job_id.reset();
        db.prepare(
              "UPDATE metric_jobs SET state = 'submitting', submissions = ?, tag = ?, job_id = NULL, after_jobs = '', node = '',"
              " submitted_at = ?, ended_at = NULL WHERE id = ?")
            .bind_all(out.submissions, out.tag, now, m.id)
            .run();
        return out;
    });
}

void metric_submitted(Database& db, const MetricRow& m, std::int64_t job_id, const std::string& after_jobs) {
    db.transaction([&] {
        db.prepare("UPDATE metric_jobs SET job_id = ?, after_jobs = ?, state = CASE state WHEN 'submitting' THEN 'queued' ELSE state END"
                   " WHERE id = ?")
            .bind_all(job_id, after_jobs, m.id)
            .run();
    });
}

void metric_never_submitted(Database& db, const MetricRow& m, const std::string& why) {
    db.transaction([&] {
        db.prepare("UPDATE metric_jobs SET state = 'waiting', reason = ? WHERE id = ? AND state = 'submitting'").bind_all(why, m.id).run();
    });
}

void metric_running(Database& db, const MetricRow& m, const std::string& node) {
    db.transaction([&] {
        db.prepare("UPDATE metric_jobs SET state = 'running', node = ? WHERE id = ? AND state IN ('queued', 'submitting')")
            .bind_all(node, m.id)
            .run();
    });
}

void finish_metric(Database& db, const MetricRow& m, const MetricOutcome& o, double now) {
    db.transaction([&] {
        auto cur = db.prepare("SELECT state FROM metric_jobs WHERE id = ?");
        cur.bind(1, m.id);
        if (!cur.step()) return;
        // Cancelled (or stopped, its inference failed) meanwhile: that stands, whatever the job did.
        if (cur.column_text(0) == "cancelled" || cur.column_text(0) == "failed") {
            db.prepare("UPDATE metric_jobs SET ended_at = ? WHERE id = ?").bind_all(now, m.id).run();
            return;
        }
        const std::string node_sql = "node = CASE WHEN ? = '' THEN node ELSE ? END";
        switch (o.kind) {
        case MetricOutcome::Kind::done: {
            auto ins = db.prepare("INSERT OR REPLACE INTO results (evaluation, dataset, metric, value, info) VALUES (?, ?, ?, ?, ?)");
            for (const auto& s : o.scores) {
                ins.reset();
                ins.bind_all(m.evaluation, m.dataset, s.metric, s.value, s.info).run();
            }
            db.prepare("UPDATE metric_jobs SET state = 'done', category = '', reason = '', ended_at = ?, " + node_sql + " WHERE id = ?")
                .bind_all(now, o.node, o.node, m.id)
                .run();
            break;
        }
        case MetricOutcome::Kind::not_ready:
            db.prepare("UPDATE metric_jobs SET state = 'waiting', reason = ?, ended_at = ? WHERE id = ?")
                .bind_all(o.reason, now, m.id)
                .run();
            break;
        case MetricOutcome::Kind::failed:
            db.prepare(fmt::format("UPDATE metric_jobs SET state = ?, failures = failures + 1, category = ?, reason = ?, evidence = ?, log = ?,"
                                   " ended_at = ?, {} WHERE id = ?",
                                   node_sql))
                .bind_all(o.retry ? "waiting" : "failed", o.category,
                          o.retry ? fmt::format("retrying after {} ({})", o.reason, o.category) : o.reason, o.evidence, o.log, now, o.node,
                          o.node, m.id)
                .run();
            break;
        }
        close_if_finished(db, m.evaluation, now);
    });
}

void metric_given_up(Database& db, const MetricRow& m, const std::string& state, const std::string& reason, double now) {
    db.transaction([&] {
        db.prepare("UPDATE metric_jobs SET state = ?, reason = ?, ended_at = ? WHERE id = ? AND state = 'waiting'")
            .bind_all(state, reason, now, m.id)
            .run();
        close_if_finished(db, m.evaluation, now);
    });
}

void stop_metric_jobs_of(Database& db, const TrialRow& t, const std::string& reason, double now) {
    // Waiting: never submitted again (ended now). In Slurm's queue: ended_at stays NULL until
    // the kill is taken (metric_killed), which is how metrics_to_kill finds it.
    db.prepare("UPDATE metric_jobs SET state = 'failed', reason = ?, ended_at = CASE WHEN state = 'waiting' THEN ? ELSE NULL END"
               " WHERE state IN ('waiting', 'submitting', 'queued', 'running')"
               " AND id IN (SELECT metric FROM metric_trials WHERE trial = ?)")
        .bind_all(reason, now, t.id)
        .run();
}

std::vector<MetricRow> metrics_to_kill(Database& db) {
    std::vector<MetricRow> out;
    // Every other failed row was ended when it failed: a failed one without ended_at was stopped
    // while its job was in Slurm's queue.
    auto q = db.prepare(fmt::format("SELECT {} FROM metric_jobs WHERE state IN ('cancelled', 'failed') AND tag IS NOT NULL AND ended_at IS NULL ORDER BY id",
                                    metric_columns()));
    while (q.step()) out.push_back(metric_from(q));
    return out;
}

void metric_killed(Database& db, const MetricRow& m, double now) {
    db.transaction([&] { db.prepare("UPDATE metric_jobs SET ended_at = ? WHERE id = ?").bind_all(now, m.id).run(); });
}

}  // namespace acme::evalsched
