#include "evalsched/daemon/views.hpp"

#include <deque>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "common/store/evalsched_store.hpp"
#include "evalsched/core/priors.hpp"

namespace acme::evalsched {
namespace {

using nlohmann::json;
using store::Database;

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
                                          : " WHERE " + visible_to(caller, "e");
    auto bind = [&](store::Statement& q) {
        if (which.id) q.bind(1, *which.id);
        else if (which.ids) q.bind(1, ids_json);
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

std::vector<json> summaries_of(Database& db, const std::vector<std::int64_t>& ids, const Caller& caller) {
    return summaries(db, Which{std::nullopt, &ids}, caller);
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

std::optional<std::int64_t> evaluation_version(Database& db, std::int64_t id, const Caller& caller) {
    auto q = db.prepare("SELECT version, uid FROM evaluations WHERE id = ?");
    q.bind(1, id);
    if (!q.step() || !may_see(caller, static_cast<std::uint32_t>(q.column_int(1)))) return std::nullopt;
    return q.column_int(0);
}

std::string report_versions(Database& db, const std::string& name_or_id, const Caller& caller) {
    auto q = db.prepare(
        "SELECT COALESCE(group_concat(id || ':' || version, ','), '') FROM (SELECT id, version FROM evaluations"
        " WHERE (name = ? OR CAST(id AS TEXT) = ?) AND " + visible_to(caller) + " ORDER BY id)");
    q.bind_all(name_or_id, name_or_id);
    q.step();
    return q.column_text(0);
}

std::optional<json> report_json(Database& db, const std::string& name_or_id, const Caller& caller) {
    std::vector<std::pair<std::int64_t, std::string>> evals;  // id, checkpoint
    auto q = db.prepare(
        "SELECT id, checkpoint FROM evaluations WHERE (name = ? OR CAST(id AS TEXT) = ?) AND " + visible_to(caller) +
        " ORDER BY submitted_at, id");
    q.bind_all(name_or_id, name_or_id);
    while (q.step()) evals.emplace_back(q.column_int(0), q.column_text(1));
    if (evals.empty()) return std::nullopt;
    json checkpoints = json::array();
    std::map<std::pair<std::string, std::string>, json> rows;  // (dataset, metric) -> {checkpoint: value}
    for (const auto& [id, ckpt] : evals) checkpoints.push_back({{"id", id}, {"checkpoint", ckpt}});
    // Every evaluation's scores in one query, and its unscored trials in another.
    const std::string of_evals =
        " JOIN evaluations e ON e.id = x.evaluation WHERE (e.name = ? OR CAST(e.id AS TEXT) = ?) AND " + visible_to(caller, "e");
    auto r = db.prepare(std::string("SELECT x.evaluation, x.dataset, x.metric, x.value FROM results x") + of_evals +
                        " ORDER BY x.evaluation, x.dataset, x.metric");
    r.bind_all(name_or_id, name_or_id);
    while (r.step()) rows[{r.column_text(1), r.column_text(2)}][std::to_string(r.column_int(0))] = r.column_double(3);
    // Datasets without a score say why (failed, still running), so a gap is never silent.
    auto f = db.prepare(std::string("SELECT x.evaluation, x.datasets, x.state, x.reason FROM trials x") + of_evals +
                        " AND x.state != 'done' ORDER BY x.evaluation, x.id");
    f.bind_all(name_or_id, name_or_id);
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
    mq.bind_all(name_or_id, name_or_id);
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

}  // namespace acme::evalsched
