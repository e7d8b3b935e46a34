#include "evalsched/daemon/sched/pilot_tail.hpp"

#include <fmt/format.h>

#include "evalsched/daemon/attempts.hpp"
#include "evalsched/daemon/sched/job_script.hpp"

namespace acme::evalsched {

using store::Database;

std::optional<StoredSuite> load_stored_suite(Database& db, std::int64_t evaluation) {
    auto q = db.prepare("SELECT suite_text, suite_file, served FROM evaluations WHERE id = ?");
    q.bind(1, evaluation);
    if (!q.step() || q.column_text(0).empty()) return std::nullopt;
    try {
        Suite s = parse_suite(q.column_text(0), q.column_text(1));
        const bool served = q.column_int(2) != 0;
        return StoredSuite{served ? serving_suite(s) : std::move(s), served};
    } catch (const SuiteError&) {
        return std::nullopt;
    }
}

Trial core_trial(const TrialRow& t) {
    Trial c;
    c.id = t.trial_key;
    for (const auto& d : t.parts()) c.parts.push_back(TrialPart{d, t.shard, t.num_shards});
    c.gpus = t.gpus;
    c.prior.median_s = t.median_s;
    c.prior.p90_s = t.p90_s;
    c.startup_s = t.startup_s;
    c.command = t.command;
    c.metric_s = t.metric_s;
    return c;
}

Checkpoint core_checkpoint(const EvalInfo& e) {
    return Checkpoint{e.key(), std::string(kStagedVar), e.output_dir, ModelSpec{e.params_b, e.checkpoint_bytes}};
}

std::vector<TrialRow> replace_by_pieces(Database& db, const TrialRow& t, const std::vector<Trial>& pieces) {
    if (pieces.size() < 2) return {};
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
        for (const Trial& p : pieces) {
            ins.reset();
            ins.bind_all(t.evaluation, p.id, p.parts.front().dataset, p.parts.front().shard, p.parts.front().num_shards, p.gpus,
                         p.prior.median_s, p.prior.p90_s, p.startup_s, p.metric_s, t.conservative ? 1 : 0, p.command, t.excluded_nodes)
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
