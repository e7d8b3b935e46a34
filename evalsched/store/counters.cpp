#include "evalsched/store/counters.hpp"

#include <map>

namespace acme::evalsched {

using store::Database;

namespace {

// Rows per state of `table`, every state in `states` present (0 when none).
template <std::size_t N>
std::vector<std::pair<std::string, std::int64_t>> by_state(Database& db, const std::string& table, const char* const (&states)[N]) {
    std::map<std::string, std::int64_t> n;
    for (const char* s : states) n[s] = 0;
    auto q = db.prepare("SELECT state, COUNT(*) FROM " + table + " GROUP BY state");
    while (q.step()) n[q.column_text(0)] = q.column_int(1);
    return {n.begin(), n.end()};
}

Total total(Database& db, const char* name) {
    auto q = db.prepare("SELECT sum, count FROM totals WHERE name = ?");
    q.bind(1, name);
    if (!q.step()) return {};
    return Total{q.column_double(0), q.column_int(1)};
}

}  // namespace

Counts counts(Database& db) {
    Counts c;
    c.trials_by_state = by_state(db, "trials", kTrialStates);
    c.metric_jobs_by_state = by_state(db, "metric_jobs", kMetricJobStates);
    auto e = db.prepare("SELECT COUNT(*) FROM evaluations WHERE state = 'active'");
    e.step();
    c.evaluations_active = e.column_int(0);
    c.shared_bytes = total(db, "shared_bytes").sum;
    for (const auto& [state, n] : c.trials_by_state)
        if (state == "pending" || state == "submitting" || state == "queued") c.queue_depth += n;
    auto m = db.prepare(
        "SELECT finished_at - submitted_at FROM (SELECT submitted_at, finished_at FROM evaluations"
        " WHERE state = 'done' AND finished_at IS NOT NULL ORDER BY finished_at DESC LIMIT ?) ORDER BY finished_at");
    m.bind(1, kRecentForMetrics);
    while (m.step()) c.makespans.push_back(m.column_double(0));
    c.makespan_total = total(db, "makespan");
    // The prediction is the trial's median when it was made; the run is what the trial
    // reported (run_s, store v6). Bounded: /metrics is served on the API's event loop.
    auto p = db.prepare(
        "SELECT abs(run_s - median_s) / median_s FROM trials WHERE state = 'done' AND num_shards = 1 AND run_s > 0 AND median_s > 0"
        " ORDER BY id DESC LIMIT ?");
    p.bind(1, kRecentForMetrics);
    while (p.step()) c.prior_errors.push_back(p.column_double(0));
    c.prior_error_total = total(db, "prior_error");
    return c;
}

}  // namespace acme::evalsched
