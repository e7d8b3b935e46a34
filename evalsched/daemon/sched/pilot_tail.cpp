#include "evalsched/daemon/sched/pilot_tail.hpp"

#include <fmt/format.h>

#include "evalsched/daemon/evaluations.hpp"
#include "evalsched/daemon/sched/job_script.hpp"
#include "evalsched/store/trial_pieces.hpp"

namespace acme::evalsched {

using store::Database;

std::optional<StoredSuite> load_stored_suite(Database& db, std::int64_t evaluation) {
    const auto stored = stored_suite_text(db, evaluation);
    if (!stored || stored->text.empty()) return std::nullopt;
    try {
        Suite s = parse_suite(stored->text, stored->file);
        return StoredSuite{stored->served ? serving_suite(s) : std::move(s), stored->served};
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
    std::vector<NewTrial> rows;
    for (const Trial& p : pieces) {
        NewTrial n = new_trial(p);
        n.datasets = p.parts.front().dataset;  // a piece is one shard of one dataset
        n.conservative = t.conservative;       // as the trial it was cut from
        rows.push_back(std::move(n));
    }
    return replace_trial(db, t, rows);
}

}  // namespace acme::evalsched
