#include "acct/gpuacct/core/eval_timeline.hpp"

#include "common/store/database.hpp"

namespace acme::acct {

std::vector<TrialAttempt> read_trial_attempts(const std::string& path) {
    store::OpenOptions options;
    options.read_only = true;
    options.create = false;
    store::Database db(path, options);
    auto q = db.prepare(R"sql(
        SELECT e.name || '/' || e.checkpoint, t.trial_key, a.node, a.state, a.job_id, t.gpus,
               COALESCE(a.submitted_at, 0), COALESCE(a.ended_at, 0)
        FROM attempts a JOIN trials t ON t.id = a.trial JOIN evaluations e ON e.id = t.evaluation
        WHERE a.submitted_at IS NOT NULL
        ORDER BY a.submitted_at)sql");
    std::vector<TrialAttempt> out;
    while (q.step()) {
        TrialAttempt a;
        a.evaluation = q.column_text(0);
        a.trial = q.column_text(1);
        a.node = q.column_text(2);
        a.state = q.column_text(3);
        a.job_id = q.column_optional_int(4);
        a.gpus = static_cast<int>(q.column_int(5));
        a.submitted = q.column_double(6);
        a.ended = q.column_double(7);
        out.push_back(std::move(a));
    }
    return out;
}

}  // namespace acme::acct
