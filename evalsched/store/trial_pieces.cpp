#include "evalsched/store/trial_pieces.hpp"

#include "evalsched/store/attempts.hpp"

namespace acme::evalsched {

using store::Database;

std::optional<StoredSuiteText> stored_suite_text(Database& db, std::int64_t evaluation) {
    auto q = db.prepare("SELECT suite_text, suite_file, served FROM evaluations WHERE id = ?");
    q.bind(1, evaluation);
    if (!q.step()) return std::nullopt;
    return StoredSuiteText{q.column_text(0), q.column_text(1), q.column_int(2) != 0};
}

std::vector<TrialRow> replace_trial(Database& db, const TrialRow& t, const std::vector<NewTrial>& pieces) {
    return db.transaction([&] {
        std::vector<TrialRow> out;
        auto live = db.prepare("SELECT state, (SELECT COUNT(*) FROM attempts WHERE trial = trials.id) FROM trials WHERE id = ?");
        live.bind(1, t.id);
        if (!live.step() || live.column_text(0) != "pending" || live.column_int(1) != 0) return out;
        std::vector<std::int64_t> metrics;
        auto m = db.prepare("SELECT metric FROM metric_trials WHERE trial = ?");
        m.bind(1, t.id);
        while (m.step()) metrics.push_back(m.column_int(0));
        db.prepare("DELETE FROM metric_trials WHERE trial = ?").bind(1, t.id).run();
        db.prepare("DELETE FROM trials WHERE id = ?").bind(1, t.id).run();
        auto ins = db.prepare(
            "INSERT INTO trials (evaluation, trial_key, datasets, shard, num_shards, gpus, median_s, p90_s, startup_s, metric_s,"
            " conservative, command, state, excluded_nodes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?)");
        auto link = db.prepare("INSERT INTO metric_trials (metric, trial) VALUES (?, ?)");
        for (const NewTrial& p : pieces) {
            ins.reset();
            ins.bind_all(t.evaluation, p.key, p.datasets, p.shard, p.num_shards, p.gpus, p.median_s, p.p90_s, p.startup_s, p.metric_s,
                         p.conservative ? 1 : 0, p.command, t.excluded_nodes)
                .run();
            const std::int64_t id = db.last_insert_rowid();
            for (const std::int64_t metric : metrics) {
                link.reset();
                link.bind_all(metric, id).run();
            }
            if (auto row = load_trial(db, id)) out.push_back(std::move(*row));
        }
        return out;
    });
}

}  // namespace acme::evalsched
