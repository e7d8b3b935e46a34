#include "evalsched/daemon/state.hpp"

#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "common/store/evalsched_store.hpp"

namespace acme::evalsched {
namespace {

using nlohmann::json;
using store::Database;

constexpr const char* kEvalColumns =
    "id, name, checkpoint, path, user, output_dir, uid, gid, checkpoint_bytes, params_b, submitted_at, priority";

EvalInfo eval_from(store::Statement& q) {
    EvalInfo e;
    e.id = q.column_int(0);
    e.name = q.column_text(1);
    e.checkpoint = q.column_text(2);
    e.path = q.column_text(3);
    e.user = q.column_text(4);
    e.output_dir = q.column_text(5);
    e.uid = static_cast<std::uint32_t>(q.column_int(6));
    e.gid = static_cast<std::uint32_t>(q.column_int(7));
    e.checkpoint_bytes = q.column_double(8);
    e.params_b = q.column_double(9);
    e.submitted_at = q.column_double(10);
    e.priority = static_cast<int>(q.column_int(11));
    return e;
}

constexpr const char* kTrialColumns =
    "id, evaluation, trial_key, datasets, command, excluded_nodes, state, shard, num_shards, gpus, attempts,"
    " median_s, p90_s, startup_s, metric_s, conservative";

TrialRow trial_from(store::Statement& q) {
    TrialRow t;
    t.id = q.column_int(0);
    t.evaluation = q.column_int(1);
    t.trial_key = q.column_text(2);
    t.datasets = q.column_text(3);
    t.command = q.column_text(4);
    t.excluded_nodes = q.column_text(5);
    t.state = q.column_text(6);
    t.shard = static_cast<int>(q.column_int(7));
    t.num_shards = static_cast<int>(q.column_int(8));
    t.gpus = static_cast<int>(q.column_int(9));
    t.attempts = static_cast<int>(q.column_int(10));
    t.median_s = q.column_double(11);
    t.p90_s = q.column_double(12);
    t.startup_s = q.column_double(13);
    t.metric_s = q.column_double(14);
    t.conservative = q.column_int(15) != 0;
    return t;
}

constexpr const char* kAttemptColumns = "id, trial, number, tag, node, state, job_id, submitted_at";

AttemptRow attempt_from(store::Statement& q) {
    AttemptRow a;
    a.id = q.column_int(0);
    a.trial = q.column_int(1);
    a.number = static_cast<int>(q.column_int(2));
    a.tag = q.column_text(3);
    a.node = q.column_text(4);
    a.state = q.column_text(5);
    a.job_id = q.column_optional_int(6);
    a.submitted_at = q.column_optional_double(7).value_or(0);
    return a;
}

constexpr const char* kMetricColumns =
    "id, evaluation, dataset, command, tag, state, submissions, failures, estimate_s, job_id, after_jobs";

// The row; its trials are read by metrics_in_state.
MetricRow metric_from(store::Statement& q) {
    MetricRow m;
    m.id = q.column_int(0);
    m.evaluation = q.column_int(1);
    m.dataset = q.column_text(2);
    m.command = q.column_text(3);
    m.tag = q.column_optional_text(4).value_or("");
    m.state = q.column_text(5);
    m.submissions = static_cast<int>(q.column_int(6));
    m.failures = static_cast<int>(q.column_int(7));
    m.estimate_s = q.column_double(8);
    m.job_id = q.column_optional_int(9);
    m.after_jobs = q.column_text(10);
    return m;
}

constexpr const char* kOpenMetricStates = "('waiting', 'submitting', 'queued', 'running')";

// Whether the caller may see evaluation `id`; false also when it does not exist.
bool visible(Database& db, std::int64_t id, const Caller& c) {
    auto q = db.prepare("SELECT uid FROM evaluations WHERE id = ?");
    q.bind(1, id);
    if (!q.step()) return false;
    return c.admin || static_cast<std::uint32_t>(q.column_int(0)) == c.uid;
}

// Closes the evaluation when none of its trials and metric jobs can change any more.
void maybe_close(Database& db, std::int64_t evaluation, double now) {
    auto q = db.prepare(
        "SELECT COALESCE(SUM(open), 0), COALESCE(SUM(state = 'failed'), 0), COALESCE(SUM(state = 'cancelled'), 0) FROM ("
        " SELECT state, state NOT IN ('done', 'failed', 'cancelled') AS open FROM trials WHERE evaluation = ?1"
        " UNION ALL SELECT state, state NOT IN ('done', 'failed', 'cancelled') FROM metric_jobs WHERE evaluation = ?1)");
    q.bind(1, evaluation);
    if (!q.step() || q.column_int(0) > 0) return;
    const char* state = q.column_int(2) > 0 ? "cancelled" : q.column_int(1) > 0 ? "failed" : "done";
    db.prepare("UPDATE evaluations SET state = ?, finished_at = ? WHERE id = ? AND state = 'active'").bind_all(state, now, evaluation).run();
}

// The summary columns of one evaluation; the counters are filled in by summaries().
json eval_base(store::Statement& q) {
    // columns: id, name, checkpoint, path, user, state, submitted_at, finished_at, suite_name, priority
    return json{{"id", q.column_int(0)},
                {"name", q.column_text(1)},
                {"checkpoint", q.column_text(2)},
                {"path", q.column_text(3)},
                {"user", q.column_text(4)},
                {"state", q.column_text(5)},
                {"submitted_at", q.column_double(6)},
                {"finished_at", q.is_null(7) ? json(nullptr) : json(q.column_double(7))},
                {"suite", q.column_text(8)},
                {"priority", q.column_int(9)},
                {"trials", {{"pending", 0}, {"submitting", 0}, {"queued", 0}, {"running", 0}, {"done", 0}, {"failed", 0}, {"cancelled", 0}}},
                {"metric_jobs", {{"waiting", 0}, {"submitting", 0}, {"queued", 0}, {"running", 0}, {"done", 0}, {"failed", 0}, {"cancelled", 0}}},
                {"remaining_gpu_s", 0.0},
                {"running_gpus", 0},
                {"shared_bytes_read", 0.0},
                {"copies", 0}};
}

constexpr const char* kSummaryColumns =
    "SELECT e.id, e.name, e.checkpoint, e.path, e.user, e.state, e.submitted_at, e.finished_at, e.suite_name, e.priority FROM evaluations e";

// Which evaluations summaries() reads: one, every one the caller may see, or a list.
struct Which {
    std::optional<std::int64_t> id;
    const std::vector<std::int64_t>* ids = nullptr;
};

// Summaries of the evaluations `which` names, in id order: a fixed number of queries however
// many evaluations there are (trial counts, the ETA's remaining work and the stagings each
// grouped by evaluation), never a few queries per evaluation.
std::vector<json> summaries(Database& db, const Which& which, const Caller& caller) {
    // The same evaluations filter on `e` in every query.
    std::string ids_json;
    if (which.ids) {
        json a = json::array();
        for (auto i : *which.ids) a.push_back(i);
        ids_json = a.dump();
    }
    const std::string where = which.id    ? " WHERE e.id = ?"
                              : which.ids ? " WHERE e.id IN (SELECT value FROM json_each(?))"
                                          : " WHERE (? OR e.uid = ?)";
    auto bind = [&](store::Statement& q) {
        if (which.id) q.bind(1, *which.id);
        else if (which.ids) q.bind(1, ids_json);
        else q.bind_all(caller.admin ? 1 : 0, caller.uid);
    };
    std::vector<json> out;
    std::map<std::int64_t, std::size_t> index;
    auto q = db.prepare(std::string(kSummaryColumns) + where + " ORDER BY e.id");
    bind(q);
    while (q.step()) {
        index.emplace(q.column_int(0), out.size());
        out.push_back(eval_base(q));
    }
    if (out.empty()) return out;
    auto c = db.prepare("SELECT t.evaluation, t.state, COUNT(*) FROM evaluations e JOIN trials t ON t.evaluation = e.id" + where +
                        " GROUP BY t.evaluation, t.state");
    bind(c);
    while (c.step())
        if (auto it = index.find(c.column_int(0)); it != index.end()) out[it->second]["trials"][c.column_text(1)] = c.column_int(2);
    auto mc = db.prepare("SELECT m.evaluation, m.state, COUNT(*) FROM evaluations e JOIN metric_jobs m ON m.evaluation = e.id" + where +
                         " GROUP BY m.evaluation, m.state");
    bind(mc);
    while (mc.step())
        if (auto it = index.find(mc.column_int(0)); it != index.end()) out[it->second]["metric_jobs"][mc.column_text(1)] = mc.column_int(2);
    // ETA from priors: the remaining trials' median work spread over the GPUs they run on now.
    auto r = db.prepare(
        "SELECT t.evaluation, COALESCE(SUM(t.gpus * (t.startup_s + t.median_s)), 0),"
        " COALESCE(SUM(CASE WHEN t.state IN ('running') THEN t.gpus END), 0)"
        " FROM evaluations e JOIN trials t ON t.evaluation = e.id" + where +
        " AND t.state IN ('pending', 'submitting', 'queued', 'running') GROUP BY t.evaluation");
    bind(r);
    while (r.step())
        if (auto it = index.find(r.column_int(0)); it != index.end()) {
            out[it->second]["remaining_gpu_s"] = r.column_double(1);
            out[it->second]["running_gpus"] = r.column_int(2);
        }
    auto b = db.prepare(
        "SELECT s.evaluation, COALESCE(SUM(s.bytes), 0), COUNT(*) FILTER (WHERE s.copied = 1)"
        " FROM evaluations e JOIN stagings s ON s.evaluation = e.id" + where + " GROUP BY s.evaluation");
    bind(b);
    while (b.step())
        if (auto it = index.find(b.column_int(0)); it != index.end()) {
            out[it->second]["shared_bytes_read"] = b.column_double(1);
            out[it->second]["copies"] = b.column_int(2);
        }
    return out;
}

}  // namespace

std::vector<std::string> TrialRow::parts() const {
    std::vector<std::string> out;
    std::stringstream ss(datasets);
    std::string d;
    while (std::getline(ss, d, ',')) out.push_back(d);
    return out;
}

std::string attempt_tag(const std::string& instance, std::int64_t evaluation, std::int64_t trial, int number) {
    return fmt::format("evalsched-{}-{}-{}-{}", instance, evaluation, trial, number);
}

std::string instance_id(Database& db) {
    auto q = db.prepare("SELECT id FROM instance LIMIT 1");
    return q.step() ? q.column_text(0) : std::string("0");
}

std::int64_t create_evaluation(Database& db, const SubmitRequest& req, const Caller& caller, const std::string& results_dir,
                               const std::function<TrialSet(const std::string&)>& make, double now) {
    return db.transaction([&] {
        db.prepare(
              "INSERT INTO evaluations (name, checkpoint, path, suite_name, suite_file, uid, gid, user, priority, params_b,"
              " checkpoint_bytes, output_dir, state, submitted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?)")
            .bind_all(req.name, req.checkpoint, req.checkpoint_path, req.suite.name, req.suite_file, caller.uid, caller.gid,
                      caller.user, req.priority, req.params_b, req.checkpoint_bytes, results_dir, now)
            .run();
        const std::int64_t id = db.last_insert_rowid();
        const std::string output_dir = fmt::format("{}/{}", results_dir, id);
        db.prepare("UPDATE evaluations SET output_dir = ? WHERE id = ?").bind_all(output_dir, id).run();
        const TrialSet set = make(output_dir);
        auto ins = db.prepare(
            "INSERT INTO trials (evaluation, trial_key, datasets, shard, num_shards, gpus, median_s, p90_s, startup_s, metric_s,"
            " conservative, command, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending')");
        std::map<std::string, std::int64_t> trial_ids;  // the core's trial id -> row
        for (const auto& t : set.trials) {
            std::string datasets;
            for (const auto& p : t.parts) datasets += (datasets.empty() ? "" : ",") + p.dataset;
            ins.reset();
            ins.bind_all(id, t.id, datasets, t.parts.front().shard, t.parts.front().num_shards, t.gpus, t.prior.median_s,
                         t.prior.p90_s, t.startup_s, t.metric_s, t.prior.conservative() ? 1 : 0, t.command)
                .run();
            trial_ids[t.id] = db.last_insert_rowid();
        }
        auto mins = db.prepare("INSERT INTO metric_jobs (evaluation, dataset, command, estimate_s, state) VALUES (?, ?, ?, ?, 'waiting')");
        auto link = db.prepare("INSERT INTO metric_trials (metric, trial) VALUES (?, ?)");
        for (const auto& m : set.metrics) {
            if (m.command.empty()) continue;  // scored inside its trials
            mins.reset();
            mins.bind_all(id, m.dataset, m.command, m.estimate_s).run();
            const std::int64_t metric = db.last_insert_rowid();
            for (const auto& after : m.after) {
                link.reset();
                link.bind_all(metric, trial_ids.at(after)).run();
            }
        }
        return id;
    });
}

std::optional<json> evaluation_json(Database& db, std::int64_t id, const Caller& caller) {
    if (!visible(db, id, caller)) return std::nullopt;
    auto found = summaries(db, Which{id}, caller);
    if (found.empty()) return std::nullopt;
    json e = std::move(found.front());
    json trials = json::array();
    auto t = db.prepare(
        "SELECT t.id, t.trial_key, t.datasets, t.gpus, t.state, t.attempts, t.median_s, t.p90_s, t.conservative, t.reason,"
        " (SELECT node FROM attempts a WHERE a.trial = t.id ORDER BY number DESC LIMIT 1),"
        " (SELECT job_id FROM attempts a WHERE a.trial = t.id ORDER BY number DESC LIMIT 1)"
        " FROM trials t WHERE t.evaluation = ? ORDER BY t.id");
    t.bind(1, id);
    auto aq = db.prepare("SELECT number, node, state, job_id, category, reason FROM attempts WHERE trial = ? ORDER BY number");
    while (t.step()) {
        json a = json::array();
        aq.reset();
        aq.bind(1, t.column_int(0));
        while (aq.step())
            a.push_back({{"number", aq.column_int(0)},
                         {"node", aq.column_text(1)},
                         {"state", aq.column_text(2)},
                         {"job_id", aq.is_null(3) ? json(nullptr) : json(aq.column_int(3))},
                         {"category", aq.column_text(4)},
                         {"reason", aq.column_text(5)}});
        trials.push_back({{"id", t.column_int(0)},
                          {"trial", t.column_text(1)},
                          {"datasets", t.column_text(2)},
                          {"gpus", t.column_int(3)},
                          {"state", t.column_text(4)},
                          {"attempts", t.column_int(5)},
                          {"median_s", t.column_double(6)},
                          {"p90_s", t.column_double(7)},
                          {"conservative", t.column_int(8) != 0},
                          {"reason", t.column_text(9)},
                          {"node", t.column_optional_text(10).value_or("")},
                          {"job_id", t.is_null(11) ? json(nullptr) : json(t.column_int(11))},
                          {"attempt_list", a}});
    }
    e["trial_list"] = trials;
    json metrics = json::array();
    auto m = db.prepare(
        "SELECT m.dataset, m.state, m.job_id, m.node, m.failures, m.category, m.reason,"
        " (SELECT COUNT(*) FROM metric_trials x WHERE x.metric = m.id) FROM metric_jobs m WHERE m.evaluation = ? ORDER BY m.id");
    m.bind(1, id);
    while (m.step())
        metrics.push_back({{"dataset", m.column_text(0)},
                           {"state", m.column_text(1)},
                           {"job_id", m.is_null(2) ? json(nullptr) : json(m.column_int(2))},
                           {"node", m.column_text(3)},
                           {"failures", m.column_int(4)},
                           {"category", m.column_text(5)},
                           {"reason", m.column_text(6)},
                           {"after_trials", m.column_int(7)}});
    e["metric_list"] = metrics;
    return e;
}

json list_json(Database& db, const Caller& caller) {
    json out = json::array();
    for (auto& e : summaries(db, Which{}, caller)) out.push_back(std::move(e));
    return out;
}

std::string SummaryCache::list_text(Database& db, const Caller& caller) {
    // Versions first, summaries second: a summary read after its version is never older than
    // the version it is stored under (at worst newer, and rebuilt once more next time).
    std::vector<std::pair<std::int64_t, std::int64_t>> visible;  // id, version
    std::vector<std::int64_t> stale;
    auto q = db.prepare("SELECT id, version FROM evaluations WHERE (? OR uid = ?) ORDER BY id");
    q.bind_all(caller.admin ? 1 : 0, caller.uid);
    while (q.step()) {
        visible.emplace_back(q.column_int(0), q.column_int(1));
        auto it = entries_.find(visible.back().first);
        if (it == entries_.end() || it->second.version != visible.back().second) stale.push_back(visible.back().first);
    }
    if (entries_.size() + stale.size() > kMaxEntries) entries_.clear();
    if (!stale.empty()) {
        std::map<std::int64_t, std::int64_t> version_of(visible.begin(), visible.end());
        for (auto& e : summaries(db, Which{std::nullopt, &stale}, caller)) {
            const std::int64_t id = e["id"].get<std::int64_t>();
            entries_[id] = Entry{version_of[id], e.dump(-1, ' ', false, json::error_handler_t::replace)};
            ++rebuilt_;
        }
    }
    std::string out = "[";
    for (const auto& [id, version] : visible) {
        auto it = entries_.find(id);
        if (it == entries_.end()) continue;  // created after the version read: next time
        if (out.size() > 1) out += ',';
        out += it->second.text;
    }
    return out + "]";
}

std::optional<std::int64_t> evaluation_version(Database& db, std::int64_t id, const Caller& caller) {
    auto q = db.prepare("SELECT version, uid FROM evaluations WHERE id = ?");
    q.bind(1, id);
    if (!q.step() || !(caller.admin || static_cast<std::uint32_t>(q.column_int(1)) == caller.uid)) return std::nullopt;
    return q.column_int(0);
}

std::string report_versions(Database& db, const std::string& name_or_id, const Caller& caller) {
    auto q = db.prepare(
        "SELECT COALESCE(group_concat(id || ':' || version, ','), '') FROM (SELECT id, version FROM evaluations"
        " WHERE (name = ? OR CAST(id AS TEXT) = ?) AND (? OR uid = ?) ORDER BY id)");
    q.bind_all(name_or_id, name_or_id, caller.admin ? 1 : 0, caller.uid);
    q.step();
    return q.column_text(0);
}

std::optional<json> report_json(Database& db, const std::string& name_or_id, const Caller& caller) {
    std::vector<std::pair<std::int64_t, std::string>> evals;  // id, checkpoint
    auto q = db.prepare(
        "SELECT id, checkpoint, uid FROM evaluations WHERE (name = ? OR CAST(id AS TEXT) = ?) AND (? OR uid = ?)"
        " ORDER BY submitted_at, id");
    q.bind_all(name_or_id, name_or_id, caller.admin ? 1 : 0, caller.uid);
    while (q.step()) evals.emplace_back(q.column_int(0), q.column_text(1));
    if (evals.empty()) return std::nullopt;
    json checkpoints = json::array();
    std::map<std::pair<std::string, std::string>, json> rows;  // (dataset, metric) -> {checkpoint: value}
    for (const auto& [id, ckpt] : evals) checkpoints.push_back({{"id", id}, {"checkpoint", ckpt}});
    // Every evaluation's scores in one query, and its unscored trials in another.
    const char* of_evals =
        " JOIN evaluations e ON e.id = x.evaluation WHERE (e.name = ? OR CAST(e.id AS TEXT) = ?) AND (? OR e.uid = ?)";
    auto r = db.prepare(std::string("SELECT x.evaluation, x.dataset, x.metric, x.value FROM results x") + of_evals +
                        " ORDER BY x.evaluation, x.dataset, x.metric");
    r.bind_all(name_or_id, name_or_id, caller.admin ? 1 : 0, caller.uid);
    while (r.step()) rows[{r.column_text(1), r.column_text(2)}][std::to_string(r.column_int(0))] = r.column_double(3);
    // Datasets without a score say why (failed, still running), so a gap is never silent.
    auto f = db.prepare(std::string("SELECT x.evaluation, x.datasets, x.state, x.reason FROM trials x") + of_evals +
                        " AND x.state != 'done' ORDER BY x.evaluation, x.id");
    f.bind_all(name_or_id, name_or_id, caller.admin ? 1 : 0, caller.uid);
    while (f.step()) {
        TrialRow t;
        t.datasets = f.column_text(1);
        for (const auto& d : t.parts()) {
            auto& cell = rows[{d, ""}][std::to_string(f.column_int(0))];
            cell = f.column_text(2) == "failed" ? "failed: " + f.column_text(3) : f.column_text(2);
        }
    }
    // Inference done, the metric job still to score (or failed to).
    auto mq = db.prepare(std::string("SELECT x.evaluation, x.dataset, x.state, x.reason FROM metric_jobs x") + of_evals +
                         " AND x.state != 'done' ORDER BY x.evaluation, x.id");
    mq.bind_all(name_or_id, name_or_id, caller.admin ? 1 : 0, caller.uid);
    while (mq.step()) {
        auto& cell = rows[{mq.column_text(1), ""}][std::to_string(mq.column_int(0))];
        if (!cell.is_null()) continue;  // a trial's state says more (still running, failed)
        const std::string state = mq.column_text(2);
        cell = state == "failed" ? "failed: " + mq.column_text(3) : state == "cancelled" ? state : "scoring";
    }
    json out_rows = json::array();
    for (auto& [key, cells] : rows) {
        // A dataset with scores needs no placeholder row for its pending state.
        if (key.second.empty()) {
            auto it = rows.lower_bound({key.first, std::string(1, '\x01')});
            if (it != rows.end() && it->first.first == key.first) {
                for (auto& [k, v] : cells.items()) it->second.emplace(k, v);
                continue;
            }
        }
        out_rows.push_back({{"dataset", key.first}, {"metric", key.second}, {"values", cells}});
    }
    return json{{"name", name_or_id}, {"checkpoints", checkpoints}, {"rows", out_rows}};
}

json priors_json(Database& db, const std::string& dataset) {
    json out = json::array();
    std::map<std::tuple<std::string, std::string, int>, std::deque<double>> runs;
    for (const auto& r : store::recent_prior_runs(db))
        if (dataset.empty() || r.dataset == dataset) runs[{r.dataset, r.size_class, r.gpus}].push_back(r.seconds / r.fraction);
    for (auto& [k, v] : runs) {
        auto [median, p90] = median_p90(v);
        out.push_back({{"dataset", std::get<0>(k)}, {"size_class", std::get<1>(k)}, {"gpus", std::get<2>(k)}, {"runs", v.size()},
                       {"median_s", median}, {"p90_s", p90}});
    }
    return out;
}

json PriorsCache::get(Database& db, const std::string& dataset) {
    // prior_runs only grows (finish_attempt) and loses its oldest rows (prune_prior_runs): its
    // newest id and row count change whenever what priors_json reads does.
    auto k = db.prepare("SELECT (SELECT COALESCE(MAX(id), 0) FROM prior_runs), (SELECT COUNT(*) FROM prior_runs)");
    k.step();
    const std::pair<std::int64_t, std::int64_t> key{k.column_int(0), k.column_int(1)};
    if (!valid_ || key != key_) {
        all_ = priors_json(db, "");
        key_ = key;
        valid_ = true;
        ++rebuilds_;
    }
    if (dataset.empty()) return all_;
    json out = json::array();
    for (const auto& p : all_)
        if (p["dataset"] == dataset) out.push_back(p);
    return out;
}

CancelResult cancel_evaluation(Database& db, std::int64_t id, const Caller& caller, double now) {
    return db.transaction([&] {
        if (!visible(db, id, caller)) return CancelResult::not_found;
        auto q = db.prepare("SELECT state FROM evaluations WHERE id = ?");
        q.bind(1, id);
        q.step();
        if (q.column_text(0) != "active") return CancelResult::already_finished;
        // Jobs of queued and running attempts are killed by the scheduler thread (the only one
        // that talks to slurmctld); it finds them through attempts_to_cancel.
        db.prepare("UPDATE trials SET state = 'cancelled', reason = 'cancelled by ' || ? WHERE evaluation = ? AND state NOT IN ('done', 'failed')")
            .bind_all(caller.user, id)
            .run();
        db.prepare(fmt::format("UPDATE metric_jobs SET state = 'cancelled', reason = 'cancelled by ' || ? WHERE evaluation = ? AND state IN {}",
                               kOpenMetricStates))
            .bind_all(caller.user, id)
            .run();
        db.prepare("UPDATE evaluations SET state = 'cancelled', finished_at = ? WHERE id = ?").bind_all(now, id).run();
        return CancelResult::cancelled;
    });
}

std::vector<EvalInfo> active_evaluations(Database& db) {
    std::vector<EvalInfo> out;
    auto q = db.prepare(fmt::format("SELECT {} FROM evaluations WHERE state = 'active' ORDER BY priority DESC, submitted_at, id", kEvalColumns));
    while (q.step()) out.push_back(eval_from(q));
    return out;
}

std::optional<EvalInfo> load_evaluation(Database& db, std::int64_t id) {
    auto q = db.prepare(fmt::format("SELECT {} FROM evaluations WHERE id = ?", kEvalColumns));
    q.bind(1, id);
    if (!q.step()) return std::nullopt;
    return eval_from(q);
}

std::vector<TrialRow> trials_in_state(Database& db, const std::vector<std::string>& states) {
    std::vector<TrialRow> out;
    for (const auto& s : states) {
        auto q = db.prepare(fmt::format("SELECT {} FROM trials WHERE state = ? ORDER BY id", kTrialColumns));
        q.bind(1, s);
        while (q.step()) out.push_back(trial_from(q));
    }
    return out;
}

std::optional<TrialRow> load_trial(Database& db, std::int64_t id) {
    auto q = db.prepare(fmt::format("SELECT {} FROM trials WHERE id = ?", kTrialColumns));
    q.bind(1, id);
    if (!q.step()) return std::nullopt;
    return trial_from(q);
}

std::vector<AttemptRow> open_attempts(Database& db) {
    std::vector<AttemptRow> out;
    auto q = db.prepare(fmt::format("SELECT {} FROM attempts WHERE state IN ('submitting', 'queued', 'running') ORDER BY id", kAttemptColumns));
    while (q.step()) out.push_back(attempt_from(q));
    return out;
}

std::vector<std::pair<std::int64_t, std::string>> staged_nodes(Database& db) {
    std::vector<std::pair<std::int64_t, std::string>> out;
    auto q = db.prepare(
        "SELECT DISTINCT evaluation, node FROM stagings"
        " UNION SELECT DISTINCT t.evaluation, a.node FROM attempts a JOIN trials t ON t.id = a.trial"
        "   WHERE a.state IN ('submitting', 'queued', 'running') AND a.node != ''");
    while (q.step()) out.emplace_back(q.column_int(0), q.column_text(1));
    return out;
}

AttemptRow begin_attempt(Database& db, const TrialRow& t, const std::string& node, double time_limit_s, double now) {
    return db.transaction([&] {
        AttemptRow a;
        a.trial = t.id;
        a.number = t.attempts + 1;
        a.tag = attempt_tag(instance_id(db), t.evaluation, t.id, a.number);
        a.node = node;
        a.state = "submitting";
        a.submitted_at = now;
        db.prepare("INSERT INTO attempts (trial, number, tag, node, time_limit_s, state, submitted_at) VALUES (?, ?, ?, ?, ?, 'submitting', ?)")
            .bind_all(a.trial, a.number, a.tag, node, time_limit_s, now)
            .run();
        a.id = db.last_insert_rowid();
        db.prepare("UPDATE trials SET state = 'submitting', attempts = ? WHERE id = ?").bind_all(a.number, t.id).run();
        return a;
    });
}

void attempt_submitted(Database& db, const AttemptRow& a, std::int64_t job_id) {
    db.transaction([&] {
        db.prepare("UPDATE attempts SET job_id = ?, state = 'queued' WHERE id = ? AND state = 'submitting'")
            .bind_all(job_id, a.id)
            .run();
        db.prepare("UPDATE trials SET state = 'queued' WHERE id = ? AND state = 'submitting'").bind(1, a.trial).run();
    });
}

void attempt_never_submitted(Database& db, const AttemptRow& a, const std::string& why) {
    db.transaction([&] {
        db.prepare("DELETE FROM attempts WHERE id = ?").bind(1, a.id).run();
        db.prepare("UPDATE trials SET state = 'pending', attempts = attempts - 1, reason = ? WHERE id = ? AND state = 'submitting'")
            .bind_all(why, a.trial)
            .run();
    });
}

void attempt_running(Database& db, const AttemptRow& a, const std::string& node) {
    db.transaction([&] {
        db.prepare("UPDATE attempts SET state = 'running', node = ? WHERE id = ? AND state IN ('queued', 'submitting')").bind_all(node, a.id).run();
        db.prepare("UPDATE trials SET state = 'running' WHERE id = ? AND state IN ('queued', 'submitting')").bind(1, a.trial).run();
    });
}

void finish_attempt(Database& db, const AttemptRow& a, const Outcome& o, const std::string& size_class, double now) {
    db.transaction([&] {
        auto tq = db.prepare(fmt::format("SELECT {} FROM trials WHERE id = ?", kTrialColumns));
        tq.bind(1, a.trial);
        if (!tq.step()) return;
        const TrialRow t = trial_from(tq);
        auto eq = db.prepare("SELECT checkpoint, name FROM evaluations WHERE id = ?");
        eq.bind(1, t.evaluation);
        eq.step();
        const std::string checkpoint = eq.column_text(1) + "/" + eq.column_text(0);
        const char* astate = o.cancelled ? "cancelled" : o.success ? "done" : "failed";
        db.prepare("UPDATE attempts SET state = ?, ended_at = ?, exit_code = ?, category = ?, reason = ?, node = CASE WHEN ? = '' THEN node ELSE ? END"
                   " WHERE id = ?")
            .bind_all(astate, now, o.exit_code, o.category, o.reason, o.node, o.node, a.id)
            .run();
        if (o.stage)
            db.prepare("INSERT INTO stagings (evaluation, node, copied, bytes, seconds, at) VALUES (?, ?, ?, ?, ?, ?)")
                .bind_all(t.evaluation, o.node, o.stage->copied ? 1 : 0, o.stage->bytes, o.stage->seconds, now)
                .run();
        if (o.stage && o.stage->copied && o.stage->bytes > 0 && o.stage->seconds > 0)
            store::record_model_load(db, {o.node, o.stage->bytes, o.stage->seconds, checkpoint, now});
        if (t.state == "cancelled" || o.cancelled) {
            db.prepare("UPDATE trials SET state = 'cancelled' WHERE id = ?").bind(1, t.id).run();
        } else if (o.success) {
            auto ins = db.prepare("INSERT OR REPLACE INTO results (evaluation, dataset, metric, value) VALUES (?, ?, ?, ?)");
            for (const auto& s : o.scores) {
                ins.reset();
                // A shard's score is averaged into the dataset's: shards are equal slices.
                const double v = t.num_shards > 1 ? s.value / t.num_shards : s.value;
                if (t.num_shards > 1) {
                    auto cur = db.prepare("SELECT value FROM results WHERE evaluation = ? AND dataset = ? AND metric = ?");
                    cur.bind_all(t.evaluation, s.dataset, s.metric);
                    ins.bind_all(t.evaluation, s.dataset, s.metric, v + (cur.step() ? cur.column_double(0) : 0)).run();
                } else {
                    ins.bind_all(t.evaluation, s.dataset, s.metric, v).run();
                }
            }
            if (o.run_s && *o.run_s > 0 && t.parts().size() == 1)
                store::record_prior_run(db, {t.parts().front(), size_class, t.gpus, *o.run_s, 1.0 / t.num_shards, checkpoint, o.node, now});
            db.prepare("UPDATE trials SET state = 'done', reason = '' WHERE id = ?").bind(1, t.id).run();
        } else if (o.retry) {
            const std::string excluded = add_node(t.excluded_nodes, o.exclude_node);
            db.prepare("UPDATE trials SET state = 'pending', excluded_nodes = ?, reason = ? WHERE id = ?")
                .bind_all(excluded, fmt::format("retrying after {} ({})", o.reason, o.category), t.id)
                .run();
        } else {
            db.prepare("UPDATE trials SET state = 'failed', reason = ? WHERE id = ?").bind_all(fmt::format("{} ({})", o.reason, o.category), t.id).run();
        }
        maybe_close(db, t.evaluation, now);
    });
}

std::vector<AttemptRow> attempts_to_cancel(Database& db) {
    std::vector<AttemptRow> out;
    auto q = db.prepare(
        "SELECT a.id, a.trial, a.number, a.tag, a.node, a.state, a.job_id, a.submitted_at FROM attempts a"
        " JOIN trials t ON t.id = a.trial WHERE t.state = 'cancelled' AND a.state IN ('submitting', 'queued', 'running')");
    while (q.step()) out.push_back(attempt_from(q));
    return out;
}

void attempt_cancelled(Database& db, const AttemptRow& a, double now) {
    db.transaction([&] {
        db.prepare("UPDATE attempts SET state = 'cancelled', ended_at = ? WHERE id = ?").bind_all(now, a.id).run();
    });
}

std::vector<MetricRow> metrics_in_state(Database& db, const std::vector<std::string>& states) {
    std::vector<MetricRow> out;
    for (const auto& s : states) {
        auto q = db.prepare(fmt::format("SELECT {} FROM metric_jobs WHERE state = ? ORDER BY id", kMetricColumns));
        q.bind(1, s);
        while (q.step()) out.push_back(metric_from(q));
    }
    auto t = db.prepare("SELECT trial FROM metric_trials WHERE metric = ? ORDER BY trial");
    for (auto& m : out) {
        t.reset();
        t.bind(1, m.id);
        while (t.step()) m.trials.push_back(t.column_int(0));
    }
    return out;
}

std::set<std::string> metric_datasets(Database& db, std::int64_t evaluation) {
    std::set<std::string> out;
    auto q = db.prepare("SELECT dataset FROM metric_jobs WHERE evaluation = ?");
    q.bind(1, evaluation);
    while (q.step()) out.insert(q.column_text(0));
    return out;
}

std::vector<TrialProgress> metric_trial_progress(Database& db, const MetricRow& m) {
    std::vector<TrialProgress> out;
    auto q = db.prepare(
        "SELECT t.trial_key, t.state, t.reason, (SELECT a.job_id FROM attempts a WHERE a.trial = t.id"
        "   AND a.state IN ('queued', 'running') ORDER BY a.number DESC LIMIT 1)"
        " FROM metric_trials x JOIN trials t ON t.id = x.trial WHERE x.metric = ? ORDER BY t.id");
    q.bind(1, m.id);
    while (q.step()) out.push_back({q.column_text(0), q.column_text(1), q.column_text(2), q.column_optional_int(3)});
    return out;
}

std::string metric_tag(const std::string& instance, std::int64_t evaluation, std::int64_t metric, int submission) {
    return fmt::format("evalsched-{}-{}-m{}-{}", instance, evaluation, metric, submission);
}

MetricRow begin_metric(Database& db, const MetricRow& m, double now) {
    return db.transaction([&] {
        MetricRow out = m;
        out.submissions = m.submissions + 1;
        out.tag = metric_tag(instance_id(db), m.evaluation, m.id, out.submissions);
        out.state = "submitting";
        out.job_id.reset();
        db.prepare(
              "UPDATE metric_jobs SET state = 'submitting', submissions = ?, tag = ?, job_id = NULL, after_jobs = '', node = '',"
              " submitted_at = ?, ended_at = NULL WHERE id = ?")
            .bind_all(out.submissions, out.tag, now, m.id)
            .run();
        return out;
    });
}

void metric_submitted(Database& db, const MetricRow& m, std::int64_t job_id, const std::string& after_jobs) {
    db.transaction([&] {
        db.prepare("UPDATE metric_jobs SET job_id = ?, after_jobs = ?, state = CASE state WHEN 'submitting' THEN 'queued' ELSE state END"
                   " WHERE id = ?")
            .bind_all(job_id, after_jobs, m.id)
            .run();
    });
}

void metric_never_submitted(Database& db, const MetricRow& m, const std::string& why) {
    db.transaction([&] {
        db.prepare("UPDATE metric_jobs SET state = 'waiting', reason = ? WHERE id = ? AND state = 'submitting'").bind_all(why, m.id).run();
    });
}

void metric_running(Database& db, const MetricRow& m, const std::string& node) {
    db.transaction([&] {
        db.prepare("UPDATE metric_jobs SET state = 'running', node = ? WHERE id = ? AND state IN ('queued', 'submitting')")
            .bind_all(node, m.id)
            .run();
    });
}

void finish_metric(Database& db, const MetricRow& m, const MetricOutcome& o, double now) {
    db.transaction([&] {
        auto cur = db.prepare("SELECT state FROM metric_jobs WHERE id = ?");
        cur.bind(1, m.id);
        if (!cur.step()) return;
        // Cancelled meanwhile: the cancellation stands, whatever the job did.
        if (cur.column_text(0) == "cancelled") {
            db.prepare("UPDATE metric_jobs SET ended_at = ? WHERE id = ?").bind_all(now, m.id).run();
            return;
        }
        const std::string node_sql = "node = CASE WHEN ? = '' THEN node ELSE ? END";
        switch (o.kind) {
        case MetricOutcome::Kind::done: {
            auto ins = db.prepare("INSERT OR REPLACE INTO results (evaluation, dataset, metric, value) VALUES (?, ?, ?, ?)");
            for (const auto& s : o.scores) {
                ins.reset();
                ins.bind_all(m.evaluation, m.dataset, s.metric, s.value).run();
            }
            db.prepare("UPDATE metric_jobs SET state = 'done', category = '', reason = '', ended_at = ?, " + node_sql + " WHERE id = ?")
                .bind_all(now, o.node, o.node, m.id)
                .run();
            break;
        }
        case MetricOutcome::Kind::not_ready:
            db.prepare("UPDATE metric_jobs SET state = 'waiting', reason = ?, ended_at = ? WHERE id = ?")
                .bind_all(o.reason, now, m.id)
                .run();
            break;
        case MetricOutcome::Kind::failed:
            db.prepare(fmt::format("UPDATE metric_jobs SET state = ?, failures = failures + 1, category = ?, reason = ?, ended_at = ?, {}"
                                   " WHERE id = ?",
                                   node_sql))
                .bind_all(o.retry ? "waiting" : "failed", o.category,
                          o.retry ? fmt::format("retrying after {} ({})", o.reason, o.category) : o.reason, now, o.node, o.node, m.id)
                .run();
            break;
        }
        maybe_close(db, m.evaluation, now);
    });
}

void metric_given_up(Database& db, const MetricRow& m, const std::string& state, const std::string& reason, double now) {
    db.transaction([&] {
        db.prepare("UPDATE metric_jobs SET state = ?, reason = ?, ended_at = ? WHERE id = ? AND state = 'waiting'")
            .bind_all(state, reason, now, m.id)
            .run();
        maybe_close(db, m.evaluation, now);
    });
}

std::vector<MetricRow> metrics_to_kill(Database& db) {
    std::vector<MetricRow> out;
    auto q = db.prepare(fmt::format("SELECT {} FROM metric_jobs WHERE state = 'cancelled' AND tag IS NOT NULL AND ended_at IS NULL ORDER BY id",
                                    kMetricColumns));
    while (q.step()) out.push_back(metric_from(q));
    return out;
}

void metric_killed(Database& db, const MetricRow& m, double now) {
    db.transaction([&] { db.prepare("UPDATE metric_jobs SET ended_at = ? WHERE id = ?").bind_all(now, m.id).run(); });
}

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
