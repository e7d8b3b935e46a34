#include "evalsched/daemon/counters.hpp"

#include <cmath>
#include <map>

namespace acme::evalsched {

using store::Database;

Counts counts(Database& db) {
    Counts c;
    auto q = db.prepare("SELECT state, COUNT(*) FROM trials GROUP BY state ORDER BY state");
    while (q.step()) c.trials_by_state.emplace_back(q.column_text(0), q.column_int(1));
    auto mq = db.prepare("SELECT state, COUNT(*) FROM metric_jobs GROUP BY state ORDER BY state");
    while (mq.step()) c.metric_jobs_by_state.emplace_back(mq.column_text(0), mq.column_int(1));
    auto e = db.prepare("SELECT COUNT(*) FROM evaluations WHERE state = 'active'");
    e.step();
    c.evaluations_active = e.column_int(0);
    auto b = db.prepare("SELECT COALESCE(SUM(bytes), 0) FROM stagings");
    b.step();
    c.shared_bytes = b.column_double(0);
    for (const auto& [state, n] : c.trials_by_state)
        if (state == "pending" || state == "submitting" || state == "queued") c.queue_depth += n;
    auto m = db.prepare(
        "SELECT finished_at - submitted_at FROM (SELECT submitted_at, finished_at FROM evaluations"
        " WHERE state = 'done' AND finished_at IS NOT NULL ORDER BY finished_at DESC LIMIT ?) ORDER BY finished_at");
    m.bind(1, kRecentForMetrics);
    while (m.step()) c.makespans.push_back(m.column_double(0));
    // The prediction is the trial's median when it was made; the run is what the trial reported
    // (prior_runs, recorded by finish_attempt for the same checkpoint and dataset). Two bounded
    // scans matched here: a correlated subquery per trial costs seconds at 10,000 trials, and
    // /metrics is served on the API's event loop.
    std::map<std::pair<std::string, std::string>, double> runs;  // (run/checkpoint, dataset) -> newest seconds
    auto r = db.prepare("SELECT checkpoint, dataset, seconds FROM prior_runs WHERE fraction = 1 ORDER BY id DESC LIMIT ?");
    r.bind(1, 4 * kRecentForMetrics);
    while (r.step()) runs.emplace(std::pair{r.column_text(0), r.column_text(1)}, r.column_double(2));
    auto p = db.prepare(
        "SELECT e.name || '/' || e.checkpoint, t.datasets, t.median_s FROM trials t JOIN evaluations e ON e.id = t.evaluation"
        " WHERE t.state = 'done' AND t.num_shards = 1 AND t.median_s > 0 ORDER BY t.id DESC LIMIT ?");
    p.bind(1, kRecentForMetrics);
    while (p.step())
        if (auto it = runs.find({p.column_text(0), p.column_text(1)}); it != runs.end())
            c.prior_errors.push_back(std::abs(it->second - p.column_double(2)) / p.column_double(2));
    return c;
}

}  // namespace acme::evalsched
