#include "evalsched/store/follows.hpp"

#include <fmt/format.h>

namespace acme::evalsched {

using nlohmann::json;
using store::Database;

std::optional<std::int64_t> insert_follow(Database& db, const NewFollow& f, const Caller& caller, double now) {
    return db.transaction([&]() -> std::optional<std::int64_t> {
        auto n = db.prepare("SELECT COUNT(*) FROM follows WHERE uid = ? AND state = 'active'");
        n.bind_all(caller.uid);
        if (n.step() && n.column_int(0) >= kMaxFollowsPerUser) return std::nullopt;
        db.prepare(
              "INSERT INTO follows (dir, name, suite, suite_file, uid, gid, user, priority, params_b, every, keep_up, environment, state,"
              " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?)")
            .bind_all(f.dir, f.name, f.suite_text, f.suite_file, caller.uid, caller.gid, caller.user, f.priority, f.params_b, f.every,
                      f.keep_up ? 1 : 0, f.environment.empty() ? std::string() : json(f.environment).dump(), now)
            .run();
        return db.last_insert_rowid();
    });
}

std::vector<FollowRow> active_follows(Database& db) {
    std::vector<FollowRow> out;
    auto q = db.prepare(
        "SELECT id, dir, name, suite, suite_file, user, uid, gid, priority, params_b, every, keep_up, environment FROM follows"
        " WHERE state = 'active' ORDER BY id");
    while (q.step()) {
        FollowRow f;
        f.id = q.column_int(0);
        f.dir = q.column_text(1);
        f.name = q.column_text(2);
        f.suite = q.column_text(3);
        f.suite_file = q.column_text(4);
        f.user = q.column_text(5);
        f.uid = static_cast<std::uint32_t>(q.column_int(6));
        f.gid = static_cast<std::uint32_t>(q.column_int(7));
        f.priority = static_cast<int>(q.column_int(8));
        f.params_b = q.column_double(9);
        f.every = q.column_int(10);
        f.keep_up = q.column_int(11) != 0;
        const std::string env = q.column_text(12);
        if (!env.empty()) {
            const json e = json::parse(env, nullptr, false);
            if (e.is_array())
                for (const auto& v : e)
                    if (v.is_string()) f.environment.push_back(v.get<std::string>());
        }
        out.push_back(std::move(f));
    }
    return out;
}

bool follow_exists(Database& db, std::int64_t id, const Caller& caller) {
    auto q = db.prepare("SELECT uid FROM follows WHERE id = ?");
    q.bind_all(id);
    return q.step() && may_see(caller, static_cast<std::uint32_t>(q.column_int(0)));
}

bool cancel_follow(Database& db, std::int64_t id, const Caller& caller, double now) {
    return db.transaction([&] {
        if (!follow_exists(db, id, caller)) return false;
        db.prepare("UPDATE follows SET state = 'cancelled', cancelled_at = ? WHERE id = ? AND state = 'active'").bind_all(now, id).run();
        return db.changes() > 0;
    });
}

FollowHistory follow_history(Database& db, std::int64_t follow) {
    FollowHistory m;
    auto q = db.prepare(
        "SELECT COALESCE(MAX(step), -1), COALESCE(MAX(CASE WHEN evaluation IS NOT NULL THEN step END), -1),"
        " COALESCE(SUM(e.state = 'active'), 0) FROM follow_checkpoints c LEFT JOIN evaluations e ON e.id = c.evaluation WHERE c.follow = ?");
    q.bind_all(follow);
    if (q.step()) {
        m.last_step = q.column_int(0);
        m.last_submitted = q.column_int(1);
        m.evaluating = q.column_int(2) > 0;
    }
    return m;
}

std::optional<std::int64_t> orphaned_evaluation(Database& db, const FollowRow& f, const std::string& path) {
    auto q = db.prepare(
        "SELECT e.id FROM evaluations e JOIN follows f ON f.id = ? WHERE e.path = ? AND e.uid = f.uid AND e.name = f.name"
        " AND e.submitted_at >= f.created_at AND e.id NOT IN (SELECT evaluation FROM follow_checkpoints WHERE evaluation IS NOT NULL)"
        " ORDER BY e.id LIMIT 1");
    q.bind_all(f.id, path);
    if (q.step()) return q.column_int(0);
    return std::nullopt;
}

void record_checkpoint(Database& db, std::int64_t follow, long long step, const std::string& path, std::optional<std::int64_t> evaluation,
                       const std::string& reason, double now) {
    db.prepare("INSERT OR IGNORE INTO follow_checkpoints (follow, step, path, evaluation, reason, decided_at) VALUES (?, ?, ?, ?, ?, ?)")
        .bind_all(follow, step, path, evaluation, reason, now)
        .run();
}

void record_scan(Database& db, std::int64_t follow, const std::string& problem, double now) {
    db.prepare("UPDATE follows SET problem = ?, scanned_at = ? WHERE id = ?").bind_all(problem, now, follow).run();
}

json follows_json(Database& db, const Caller& caller) {
    json out = json::array();
    auto q = db.prepare("SELECT id, dir, name, suite_file, user, every, keep_up, state, problem, created_at, scanned_at FROM follows WHERE " +
                        visible_to(caller) + " ORDER BY id");
    auto c = db.prepare("SELECT step, path, evaluation, reason, decided_at FROM follow_checkpoints WHERE follow = ? ORDER BY step, path");
    while (q.step()) {
        json f{{"id", q.column_int(0)},        {"dir", q.column_text(1)},      {"name", q.column_text(2)},
               {"suite_file", q.column_text(3)}, {"user", q.column_text(4)},     {"every", q.column_int(5)},
               {"keep_up", q.column_int(6) != 0}, {"state", q.column_text(7)},   {"problem", q.column_text(8)},
               {"created_at", q.column_double(9)}, {"scanned_at", q.is_null(10) ? json() : json(q.column_double(10))}};
        json cks = json::array();
        c.reset();
        c.bind_all(q.column_int(0));
        while (c.step())
            cks.push_back({{"step", c.column_int(0)},
                           {"path", c.column_text(1)},
                           {"evaluation", c.is_null(2) ? json() : json(c.column_int(2))},
                           {"reason", c.column_text(3)},
                           {"decided_at", c.column_double(4)}});
        f["checkpoints"] = std::move(cks);
        out.push_back(std::move(f));
    }
    return out;
}

}  // namespace acme::evalsched
