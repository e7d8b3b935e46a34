#include "common/store/labels_store.hpp"

#include <array>

namespace acme::store {
namespace {

constexpr std::string_view kLabelsV1 = R"sql(
CREATE TABLE labels (
    job_id        INTEGER NOT NULL PRIMARY KEY,
    reason        TEXT NOT NULL,   -- a diagnosis reason, as faultdiag --reasons lists them
    signature     TEXT NOT NULL,   -- hashed normalised error lines (common/diagnose/signature)
    labelled_at   REAL NOT NULL,
    labelled_by   TEXT NOT NULL
);
)sql";

constexpr std::array kMigrations = {
    Migration{1, "labels v1: confirmed failure reasons with log signatures", kLabelsV1},
};

Label read(Statement& stmt) {
    return {stmt.column_int(0), stmt.column_text(1), stmt.column_text(2), stmt.column_double(3), stmt.column_text(4)};
}

}  // namespace

std::span<const Migration> labels_migrations() { return kMigrations; }

Database open_labels(const std::string& path) {
    Database db(path);
    migrate(db, labels_migrations());
    return db;
}

void put_label(Database& db, const Label& label) {
    db.prepare("INSERT INTO labels (job_id, reason, signature, labelled_at, labelled_by) VALUES (?, ?, ?, ?, ?) "
               "ON CONFLICT (job_id) DO UPDATE SET reason = excluded.reason, signature = excluded.signature, "
               "labelled_at = excluded.labelled_at, labelled_by = excluded.labelled_by")
        .bind_all(label.job_id, label.reason, label.signature, label.labelled_at, label.labelled_by)
        .run();
}

std::optional<Label> find_label(Database& db, std::int64_t job_id) {
    auto stmt = db.prepare("SELECT job_id, reason, signature, labelled_at, labelled_by FROM labels WHERE job_id = ?");
    stmt.bind_all(job_id);
    if (!stmt.step()) return std::nullopt;
    return read(stmt);
}

std::vector<Label> all_labels(Database& db) {
    std::vector<Label> out;
    auto stmt = db.prepare(
        "SELECT job_id, reason, signature, labelled_at, labelled_by FROM labels ORDER BY labelled_at, job_id");
    while (stmt.step()) out.push_back(read(stmt));
    return out;
}

}  // namespace acme::store
