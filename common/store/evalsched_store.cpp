#include "common/store/evalsched_store.hpp"

#include <array>

namespace acme::store {
namespace {

// Times are Unix epoch seconds as REAL. size_class is evalsched's bucket ("7b", "13b", ...):
// priors transfer across checkpoints of one model and across nearby sizes, not across GPUs.
constexpr std::string_view kEvalschedV1 = R"sql(
CREATE TABLE prior_runs (
    id            INTEGER PRIMARY KEY,
    dataset       TEXT NOT NULL,
    size_class    TEXT NOT NULL,
    gpus          INTEGER NOT NULL CHECK (gpus > 0),
    seconds       REAL NOT NULL CHECK (seconds > 0),  -- inference of this piece, load excluded
    fraction      REAL NOT NULL DEFAULT 1 CHECK (fraction > 0 AND fraction <= 1),
    checkpoint    TEXT NOT NULL DEFAULT '',
    node          TEXT NOT NULL DEFAULT '',
    finished_at   REAL NOT NULL
);
CREATE INDEX prior_runs_by_key ON prior_runs (dataset, size_class, gpus, finished_at);
CREATE TABLE model_loads (
    id            INTEGER PRIMARY KEY,
    node          TEXT NOT NULL,
    bytes         REAL NOT NULL CHECK (bytes > 0),
    seconds       REAL NOT NULL CHECK (seconds > 0),
    checkpoint    TEXT NOT NULL DEFAULT '',
    finished_at   REAL NOT NULL
);
CREATE INDEX model_loads_by_node ON model_loads (node, finished_at);
)sql";

constexpr std::array kMigrations = {
    Migration{1, "evalsched v1: prior_runs, model_loads", kEvalschedV1},
};

}  // namespace

std::span<const Migration> evalsched_migrations() { return kMigrations; }

Database open_evalsched_store(const std::string& path) {
    Database db(path);
    migrate(db, evalsched_migrations());
    return db;
}

void record_prior_run(Database& db, const PriorRun& r) {
    db.prepare("INSERT INTO prior_runs (dataset, size_class, gpus, seconds, fraction, checkpoint, node, finished_at)"
               " VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        .bind_all(r.dataset, r.size_class, r.gpus, r.seconds, r.fraction, r.checkpoint, r.node, r.finished_at)
        .run();
}

void record_model_load(Database& db, const ModelLoad& l) {
    db.prepare("INSERT INTO model_loads (node, bytes, seconds, checkpoint, finished_at) VALUES (?, ?, ?, ?, ?)")
        .bind_all(l.node, l.bytes, l.seconds, l.checkpoint, l.finished_at)
        .run();
}

std::vector<PriorRun> recent_prior_runs(Database& db, int per_key) {
    auto q = db.prepare(
        "SELECT dataset, size_class, gpus, seconds, fraction, checkpoint, node, finished_at FROM ("
        "  SELECT *, ROW_NUMBER() OVER (PARTITION BY dataset, size_class, gpus ORDER BY finished_at DESC, id DESC) AS n"
        "  FROM prior_runs)"
        " WHERE n <= ? ORDER BY dataset, size_class, gpus, finished_at, id");
    q.bind(1, per_key);
    std::vector<PriorRun> out;
    while (q.step())
        out.push_back({q.column_text(0), q.column_text(1), static_cast<int>(q.column_int(2)), q.column_double(3),
                       q.column_double(4), q.column_text(5), q.column_text(6), q.column_double(7)});
    return out;
}

std::vector<ModelLoad> recent_model_loads(Database& db, int per_node) {
    auto q = db.prepare(
        "SELECT node, bytes, seconds, checkpoint, finished_at FROM ("
        "  SELECT *, ROW_NUMBER() OVER (PARTITION BY node ORDER BY finished_at DESC, id DESC) AS n FROM model_loads)"
        " WHERE n <= ? ORDER BY node, finished_at, id");
    q.bind(1, per_node);
    std::vector<ModelLoad> out;
    while (q.step()) out.push_back({q.column_text(0), q.column_double(1), q.column_double(2), q.column_text(3), q.column_double(4)});
    return out;
}

int prune_prior_runs(Database& db, int keep) {
    return db.transaction([&] {
        db.prepare(
              "DELETE FROM prior_runs WHERE id IN (SELECT id FROM ("
              "  SELECT id, ROW_NUMBER() OVER (PARTITION BY dataset, size_class, gpus ORDER BY finished_at DESC, id DESC) AS n"
              "  FROM prior_runs) WHERE n > ?)")
            .bind(1, keep)
            .run();
        return db.changes();
    });
}

}  // namespace acme::store
