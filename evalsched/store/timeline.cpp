// gpuacct's timeline read of evalschedd's store (timeline.hpp): read-only, never migrating a file
// the daemon may be writing.
#include "evalsched/store/timeline.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "common/store/database.hpp"

namespace acme::store {

std::vector<AttemptSpan> read_attempt_timeline(const std::string& path) {
    OpenOptions options;
    options.read_only = true;
    options.create = false;
    Database db(path, options);
    // v2 added evaluations, trials and attempts. A node spool has a schema_version too, so the
    // tables themselves say whether this is evalschedd's file.
    auto probe = db.prepare(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN ('evaluations', 'trials', 'attempts')");
    if (!probe.step() || probe.column_int(0) != 3)
        throw std::runtime_error(fmt::format("{}: not an evalschedd store (it has no evaluations, trials and attempts "
                                             "tables): give evalschedd's database (evalsched.conf: database)", path));
    auto q = db.prepare(R"sql(
        SELECT e.name || '/' || e.checkpoint, t.trial_key, a.node, a.state, a.job_id, t.gpus,
               COALESCE(a.submitted_at, 0), COALESCE(a.ended_at, 0)
        FROM attempts a JOIN trials t ON t.id = a.trial JOIN evaluations e ON e.id = t.evaluation
        WHERE a.submitted_at IS NOT NULL
        ORDER BY a.submitted_at)sql");
    std::vector<AttemptSpan> out;
    while (q.step()) {
        AttemptSpan a;
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

}  // namespace acme::store
