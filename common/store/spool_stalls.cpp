#include "common/store/spool_stalls.hpp"

namespace acme::store {

void upsert_stall(Database& db, long long job_id, const StallRow& r) {
    db.transaction([&] {
        db.prepare("INSERT OR REPLACE INTO stalls (job_id, restart, node, ts, since, named_node, hardware, evidence, "
                   "action, withdrawn) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
            .bind_all(job_id, r.restart, r.node, r.ts, r.since,
                      r.named_node.empty() ? std::optional<std::string>() : std::optional(r.named_node),
                      r.hardware ? 1 : 0, r.evidence, r.action, r.withdrawn ? 1 : 0)
            .run();
    });
}

std::optional<StallRow> job_stall(Database& db, long long job_id, long long restart) {
    auto probe = db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'stalls'");
    if (!probe.step() || probe.column_int(0) == 0) return std::nullopt;
    auto q = db.prepare("SELECT node, ts, since, COALESCE(named_node, ''), hardware, evidence, action, withdrawn "
                        "FROM stalls WHERE job_id = ? AND restart = ?");
    q.bind(1, job_id);
    q.bind(2, restart);
    if (!q.step()) return std::nullopt;
    StallRow r;
    r.restart = restart;
    r.node = q.column_text(0);
    r.ts = q.column_double(1);
    r.since = q.column_double(2);
    r.named_node = q.column_text(3);
    r.hardware = q.column_int(4) != 0;
    r.evidence = q.column_text(5);
    r.action = q.column_text(6);
    r.withdrawn = q.column_int(7) != 0;
    return r;
}

}  // namespace acme::store
