// The run-time priors in evalschedd's store: finished trials' inference times, checkpoint
// stagings and trial startups, written as trials end and read back as a window of the newest
// rows per key. Each row type's columns are listed once, in the order of its fields.
#include "evalsched/store/priors.hpp"

#include <fmt/format.h>

namespace acme::store {

// Each row type's columns are listed once, in the order of its fields: the INSERT binds and the
// SELECT reads through the same list, so neither counts positions of its own.
namespace {
constexpr const char* kPriorRunColumns = "dataset, size_class, gpus, seconds, fraction, checkpoint, node, finished_at";
enum PriorRunColumn { pr_dataset, pr_size_class, pr_gpus, pr_seconds, pr_fraction, pr_checkpoint, pr_node, pr_finished_at };
constexpr const char* kModelLoadColumns = "node, bytes, seconds, checkpoint, finished_at";
enum ModelLoadColumn { ml_node, ml_bytes, ml_seconds, ml_checkpoint, ml_finished_at };
constexpr const char* kStartupColumns = "size_class, gpus, seconds, checkpoint, node, finished_at";
enum StartupColumn { su_size_class, su_gpus, su_seconds, su_checkpoint, su_node, su_finished_at };

PriorRun read_prior_run(const Statement& q) {
    PriorRun r;
    r.dataset = q.column_text(pr_dataset);
    r.size_class = q.column_text(pr_size_class);
    r.gpus = static_cast<int>(q.column_int(pr_gpus));
    r.seconds = q.column_double(pr_seconds);
    r.fraction = q.column_double(pr_fraction);
    r.checkpoint = q.column_text(pr_checkpoint);
    r.node = q.column_text(pr_node);
    r.finished_at = q.column_double(pr_finished_at);
    return r;
}

ModelLoad read_model_load(const Statement& q) {
    ModelLoad l;
    l.node = q.column_text(ml_node);
    l.bytes = q.column_double(ml_bytes);
    l.seconds = q.column_double(ml_seconds);
    l.checkpoint = q.column_text(ml_checkpoint);
    l.finished_at = q.column_double(ml_finished_at);
    return l;
}
StartupRun read_startup(const Statement& q) {
    StartupRun s;
    s.size_class = q.column_text(su_size_class);
    s.gpus = static_cast<int>(q.column_int(su_gpus));
    s.seconds = q.column_double(su_seconds);
    s.checkpoint = q.column_text(su_checkpoint);
    s.node = q.column_text(su_node);
    s.finished_at = q.column_double(su_finished_at);
    return s;
}
}  // namespace

void record_prior_run(Database& db, const PriorRun& r) {
    db.prepare(fmt::format("INSERT INTO prior_runs ({}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", kPriorRunColumns))
        .bind_all(r.dataset, r.size_class, r.gpus, r.seconds, r.fraction, r.checkpoint, r.node, r.finished_at)
        .run();
}

void record_model_load(Database& db, const ModelLoad& l) {
    db.prepare(fmt::format("INSERT INTO model_loads ({}) VALUES (?, ?, ?, ?, ?)", kModelLoadColumns))
        .bind_all(l.node, l.bytes, l.seconds, l.checkpoint, l.finished_at)
        .run();
}

void record_startup(Database& db, const StartupRun& s) {
    db.prepare(fmt::format("INSERT INTO prior_startups ({}) VALUES (?, ?, ?, ?, ?, ?)", kStartupColumns))
        .bind_all(s.size_class, s.gpus, s.seconds, s.checkpoint, s.node, s.finished_at)
        .run();
}

namespace {
// The newest `per_key` rows of every `key` (a column list) of `table`, oldest first within a
// key: the window every prior table is read through.
template <class Row>
std::vector<Row> newest_per_key(Database& db, std::string_view table, std::string_view columns, std::string_view key, int per_key,
                                Row (*read)(const Statement&)) {
    auto q = db.prepare(fmt::format(
        "SELECT {0} FROM ("
        "  SELECT *, ROW_NUMBER() OVER (PARTITION BY {2} ORDER BY finished_at DESC, id DESC) AS n FROM {1})"
        " WHERE n <= ? ORDER BY {2}, finished_at, id",
        columns, table, key));
    q.bind(1, per_key);
    std::vector<Row> out;
    while (q.step()) out.push_back(read(q));
    return out;
}
}  // namespace

std::vector<PriorRun> recent_prior_runs(Database& db, int per_key) {
    return newest_per_key(db, "prior_runs", kPriorRunColumns, "dataset, size_class, gpus", per_key, &read_prior_run);
}

std::vector<ModelLoad> recent_model_loads(Database& db, int per_node) {
    return newest_per_key(db, "model_loads", kModelLoadColumns, "node", per_node, &read_model_load);
}

std::vector<StartupRun> recent_startups(Database& db, int per_key) {
    return newest_per_key(db, "prior_startups", kStartupColumns, "size_class, gpus", per_key, &read_startup);
}

PriorWindow recent_priors(Database& db, int per_key) {
    return {recent_prior_runs(db, per_key), recent_model_loads(db, per_key), recent_startups(db, per_key)};
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
