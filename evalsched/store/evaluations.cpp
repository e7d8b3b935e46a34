#include "evalsched/store/evaluations.hpp"

#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace acme::evalsched {

using store::Database;

namespace {
constexpr const char* kOpenMetricStates = "('waiting', 'submitting', 'queued', 'running')";
}  // namespace

// Closes the evaluation when none of its trials and metric jobs can change any more.
void close_if_finished(Database& db, std::int64_t evaluation, double now) {
    auto q = db.prepare(
        "SELECT COALESCE(SUM(open), 0), COALESCE(SUM(state = 'failed'), 0), COALESCE(SUM(state = 'cancelled'), 0) FROM ("
        " SELECT state, state NOT IN ('done', 'failed', 'cancelled') AS open FROM trials WHERE evaluation = ?1"
        " UNION ALL SELECT state, state NOT IN ('done', 'failed', 'cancelled') FROM metric_jobs WHERE evaluation = ?1)");
    q.bind(1, evaluation);
    if (!q.step() || q.column_int(0) > 0) return;
    const char* state = q.column_int(2) > 0 ? "cancelled" : q.column_int(1) > 0 ? "failed" : "done";
    db.prepare("UPDATE evaluations SET state = ?, finished_at = ? WHERE id = ? AND state = 'active'").bind_all(state, now, evaluation).run();
}

std::int64_t insert_evaluation(Database& db, const NewEvaluation& e, const Caller& caller, const std::string& results_dir,
                               const std::function<NewTrials(const std::string&)>& make, double now) {
    return db.transaction([&] {
        db.prepare(
              "INSERT INTO evaluations (name, checkpoint, path, suite_name, suite_file, uid, gid, user, priority, params_b,"
              " checkpoint_bytes, output_dir, state, submitted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?)")
            .bind_all(e.name, e.checkpoint, e.path, e.suite_name, e.suite_file, caller.uid, caller.gid, caller.user, e.priority,
                      e.params_b, e.checkpoint_bytes, results_dir, now)
            .run();
        const std::int64_t id = db.last_insert_rowid();
        if (!e.environment.empty())
            db.prepare("UPDATE evaluations SET environment = ? WHERE id = ?").bind_all(nlohmann::json(e.environment).dump(), id).run();
        db.prepare("UPDATE evaluations SET stage = ? WHERE id = ?").bind_all(e.stage, id).run();
        db.prepare("UPDATE evaluations SET suite_text = ?, served = ? WHERE id = ?").bind_all(e.suite_text, e.served ? 1 : 0, id).run();
        const std::string output_dir = fmt::format("{}/{}", results_dir, id);
        db.prepare("UPDATE evaluations SET output_dir = ? WHERE id = ?").bind_all(output_dir, id).run();
        const NewTrials set = make(output_dir);
        auto ins = db.prepare(
            "INSERT INTO trials (evaluation, trial_key, datasets, shard, num_shards, gpus, median_s, p90_s, startup_s, metric_s,"
            " conservative, command, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending')");
        std::map<std::string, std::int64_t> trial_ids;  // the core's trial id -> row
        for (const auto& t : set.trials) {
            ins.reset();
            ins.bind_all(id, t.key, t.datasets, t.shard, t.num_shards, t.gpus, t.median_s, t.p90_s, t.startup_s, t.metric_s,
                         t.conservative ? 1 : 0, t.command)
                .run();
            trial_ids[t.key] = db.last_insert_rowid();
        }
        // What progress counts samples by (progress.hpp), for the datasets whose size the suite gives.
        auto samples = db.prepare("INSERT OR IGNORE INTO dataset_samples (evaluation, dataset, samples) VALUES (?, ?, ?)");
        for (const auto& [dataset, n] : e.samples) {
            samples.reset();
            samples.bind_all(id, dataset, n).run();
        }
        auto mins = db.prepare("INSERT INTO metric_jobs (evaluation, dataset, command, estimate_s, state) VALUES (?, ?, ?, ?, 'waiting')");
        auto link = db.prepare("INSERT INTO metric_trials (metric, trial) VALUES (?, ?)");
        for (const NewMetric& m : set.metrics) {
            mins.reset();
            mins.bind_all(id, m.dataset, m.command, m.estimate_s).run();
            const std::int64_t metric = db.last_insert_rowid();
            for (const auto& after : m.after) {
                link.reset();
                link.bind_all(metric, trial_ids.at(after)).run();
            }
        }
        return id;
    });
}

std::string load_stage(Database& db, std::int64_t evaluation) {
    auto q = db.prepare("SELECT stage FROM evaluations WHERE id = ?");
    q.bind(1, evaluation);
    return q.step() ? q.column_text(0) : std::string();
}

int active_evaluations_of(Database& db, std::uint32_t uid) {
    auto q = db.prepare("SELECT COUNT(*) FROM evaluations WHERE uid = ? AND state = 'active'");
    q.bind(1, static_cast<std::int64_t>(uid));
    return q.step() ? static_cast<int>(q.column_int(0)) : 0;
}

std::vector<std::string> stored_environment(Database& db, std::int64_t evaluation) {
    auto q = db.prepare("SELECT environment FROM evaluations WHERE id = ?");
    q.bind(1, evaluation);
    std::vector<std::string> out;
    if (!q.step()) return out;
    const nlohmann::json j = nlohmann::json::parse(q.column_text(0), nullptr, false);
    if (!j.is_array()) return out;
    for (const auto& e : j)
        if (e.is_string()) out.push_back(e.get<std::string>());
    return out;
}

CancelResult cancel_evaluation(Database& db, std::int64_t id, const Caller& caller, double now) {
    return db.transaction([&] {
        if (!visible(db, id, caller)) return CancelResult::not_found;
        auto q = db.prepare("SELECT state FROM evaluations WHERE id = ?");
        q.bind(1, id);
        q.step();
        if (q.column_text(0) != "active") return CancelResult::already_finished;
        // Jobs of queued and running attempts are killed by the scheduler thread (the only one
        // that talks to slurmctld); it finds them through attempts_to_cancel.
        db.prepare("UPDATE trials SET state = 'cancelled', reason = 'cancelled by ' || ? WHERE evaluation = ? AND state NOT IN ('done', 'failed')")
            .bind_all(caller.user, id)
            .run();
        db.prepare(fmt::format("UPDATE metric_jobs SET state = 'cancelled', reason = 'cancelled by ' || ? WHERE evaluation = ? AND state IN {}",
                               kOpenMetricStates))
            .bind_all(caller.user, id)
            .run();
        db.prepare("UPDATE evaluations SET state = 'cancelled', finished_at = ? WHERE id = ?").bind_all(now, id).run();
        return CancelResult::cancelled;
    });
}

std::vector<EvalInfo> active_evaluations(Database& db) {
    std::vector<EvalInfo> out;
    auto q = db.prepare(fmt::format("SELECT {} FROM evaluations WHERE state = 'active' ORDER BY priority DESC, submitted_at, id", eval_columns()));
    while (q.step()) out.push_back(eval_from(q));
    return out;
}

std::optional<EvalInfo> load_evaluation(Database& db, std::int64_t id) {
    auto q = db.prepare(fmt::format("SELECT {} FROM evaluations WHERE id = ?", eval_columns()));
    q.bind(1, id);
    if (!q.step()) return std::nullopt;
    return eval_from(q);
}

}  // namespace acme::evalsched
