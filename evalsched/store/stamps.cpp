#include "evalsched/store/stamps.hpp"

namespace acme::evalsched {

using store::Database;

std::optional<std::int64_t> evaluation_version(Database& db, std::int64_t id, const Caller& caller) {
    auto q = db.prepare("SELECT version, uid FROM evaluations WHERE id = ?");
    q.bind(1, id);
    if (!q.step()) return std::nullopt;
    if (!may_see(caller, static_cast<std::uint32_t>(q.column_int(1)))) return std::nullopt;
    return q.column_int(0);
}

std::string report_versions(Database& db, const std::string& name_or_id, const Caller& caller) {
    auto q = db.prepare(
        "SELECT COALESCE(group_concat(id || ':' || version, ','), '') FROM (SELECT id, version FROM evaluations"
        " WHERE (name = ? OR CAST(id AS TEXT) = ?) AND " + visible_to(caller) + " ORDER BY id)");
    q.bind_all(name_or_id, name_or_id);
    q.step();
    return q.column_text(0);  // the one column: the stamp
}

std::vector<std::pair<std::int64_t, std::int64_t>> visible_versions(Database& db, const Caller& caller) {
    std::vector<std::pair<std::int64_t, std::int64_t>> out;
    auto q = db.prepare("SELECT id, version FROM evaluations WHERE " + visible_to(caller) + " ORDER BY id");
    while (q.step()) out.emplace_back(q.column_int(0), q.column_int(1));
    return out;
}

std::array<std::int64_t, 4> priors_stamp(Database& db) {
    auto k = db.prepare(
        "SELECT (SELECT COALESCE(MAX(id), 0) FROM prior_runs), (SELECT COUNT(*) FROM prior_runs),"
        " (SELECT COALESCE(MAX(id), 0) FROM prior_startups), (SELECT COUNT(*) FROM prior_startups)");
    k.step();
    return {k.column_int(0), k.column_int(1), k.column_int(2), k.column_int(3)};
}

}  // namespace acme::evalsched
