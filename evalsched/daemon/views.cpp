#include "evalsched/daemon/views.hpp"

#include <array>
#include <deque>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "evalsched/store/priors.hpp"
#include "evalsched/daemon/columns.hpp"
#include "evalsched/core/priors.hpp"
#include "evalsched/daemon/sched/progress.hpp"

namespace acme::evalsched {
namespace {

using nlohmann::json;
using store::Database;

using K = JsonColumn::Kind;

// An evaluation's summary as its own columns show it; summaries() adds the counters.
const JsonColumn kSummary[] = {
    {"e.id", "id", K::integer},
    {"e.name", "name", K::text},
    {"e.checkpoint", "checkpoint", K::text},
    {"e.path", "path", K::text},
    {"e.user", "user", K::text},
    {"e.state", "state", K::text},
    {"e.submitted_at", "submitted_at", K::real},
    {"e.finished_at", "finished_at", K::real_or_null},
    {"e.suite_name", "suite", K::text},
    {"e.priority", "priority", K::integer},
};

// Every counter at 0, so a state with no trials (or metric jobs) in it still shows.
json summary_counters() {
    return json{{"trials", {{"pending", 0}, {"submitting", 0}, {"queued", 0}, {"running", 0}, {"done", 0}, {"failed", 0}, {"cancelled", 0}}},
                {"metric_jobs", {{"waiting", 0}, {"submitting", 0}, {"queued", 0}, {"running", 0}, {"done", 0}, {"failed", 0}, {"cancelled", 0}}},
                {"datasets", {{"total", 0}, {"scored", 0}, {"scoring", 0}, {"running", 0}, {"queued", 0}, {"failed", 0}, {"cancelled", 0}}},
                {"remaining_gpu_s", 0.0},
                {"running_gpus", 0},
                {"shared_bytes_read", 0.0},
                {"copies", 0}};
}

// Per-evaluation figures summaries() reads grouped, each a column table of its own.
const JsonColumn kTrialCounts[] = {{"t.evaluation", "evaluation", K::integer}, {"t.state", "state", K::text}, {"COUNT(*)", "n", K::integer}};
const JsonColumn kMetricCounts[] = {{"m.evaluation", "evaluation", K::integer}, {"m.state", "state", K::text}, {"COUNT(*)", "n", K::integer}};
// ETA from priors: the remaining trials' median work spread over the GPUs they run on now.
const JsonColumn kRemaining[] = {
    {"t.evaluation", "evaluation", K::integer},
    {"COALESCE(SUM(t.gpus * (t.startup_s + t.median_s)), 0)", "remaining_gpu_s", K::real},
    {"COALESCE(SUM(CASE WHEN t.state IN ('running') THEN t.gpus END), 0)", "running_gpus", K::integer},
};
// What the per-dataset counts are made of (progress.hpp), per evaluation.
const JsonColumn kDatasetTrials[] = {
    {"t.evaluation", "evaluation", K::integer}, {"t.datasets", "datasets", K::text}, {"t.state", "state", K::text}, {"t.reason", "reason", K::text},
    {"t.shard", "shard", K::integer}, {"t.num_shards", "num_shards", K::integer}};
const JsonColumn kDatasetSamples[] = {
    {"n.evaluation", "evaluation", K::integer}, {"n.dataset", "dataset", K::text}, {"n.samples", "samples", K::integer}};
const JsonColumn kDatasetMetrics[] = {
    {"m.evaluation", "evaluation", K::integer}, {"m.dataset", "dataset", K::text}, {"m.state", "state", K::text}, {"m.reason", "reason", K::text}};
const JsonColumn kDatasetScores[] = {
    {"x.evaluation", "evaluation", K::integer}, {"x.dataset", "dataset", K::text}, {"x.metric", "metric", K::text}, {"x.value", "value", K::real}};
const JsonColumn kStaged[] = {
    {"s.evaluation", "evaluation", K::integer},
    {"COALESCE(SUM(s.bytes), 0)", "shared_bytes_read", K::real},
    {"COUNT(*) FILTER (WHERE s.copied = 1)", "copies", K::integer},
};

// {dataset: samples} from kDatasetSamples rows (null: none).
json samples_by_dataset(const json& rows) {
    json out = json::object();
    if (rows.is_array())
        for (const auto& r : rows) out[r["dataset"].get<std::string>()] = r["samples"];
    return out;
}

// One trial of evaluation_json, with its newest attempt's node and job.
const JsonColumn kTrialView[] = {
    {"t.id", "id", K::integer},
    {"t.trial_key", "trial", K::text},
    {"t.datasets", "datasets", K::text},
    {"t.shard", "shard", K::integer},
    {"t.num_shards", "num_shards", K::integer},
    {"t.gpus", "gpus", K::integer},
    {"t.state", "state", K::text},
    {"t.attempts", "attempts", K::integer},
    {"t.median_s", "median_s", K::real},
    {"t.p90_s", "p90_s", K::real},
    {"t.conservative", "conservative", K::boolean},
    {"t.reason", "reason", K::text},
    {"(SELECT node FROM attempts a WHERE a.trial = t.id ORDER BY number DESC LIMIT 1)", "node", K::text_or_empty},
    {"(SELECT job_id FROM attempts a WHERE a.trial = t.id ORDER BY number DESC LIMIT 1)", "job_id", K::integer_or_null},
    // mode = pilots: the newest attempt's step in its pilot's job (job_id is the pilot's).
    {"(SELECT step_id FROM attempts a WHERE a.trial = t.id ORDER BY number DESC LIMIT 1)", "step_id", K::integer_or_null},
};
const JsonColumn kAttemptView[] = {
    {"number", "number", K::integer},     {"node", "node", K::text},         {"state", "state", K::text},
    {"job_id", "job_id", K::integer_or_null}, {"category", "category", K::text}, {"reason", "reason", K::text},
    {"ended_at", "ended_at", K::real_or_null}, {"step_id", "step_id", K::integer_or_null},
};
// The precursor jobs that copy the checkpoint onto each node, and the pilots that hold GPUs
// for its trials: what a user sees in squeue beside the trials, so `evalsched show` names them.
const JsonColumn kStageView[] = {
    {"node", "node", K::text},      {"number", "number", K::integer}, {"state", "state", K::text},
    {"job_id", "job_id", K::integer_or_null}, {"reason", "reason", K::text},
};
const JsonColumn kPilotView[] = {
    {"job_id", "job_id", K::integer_or_null}, {"node", "node", K::text},  {"gpus", "gpus", K::integer},
    {"state", "state", K::text},              {"granted_s", "granted_s", K::real_or_null},
    {"steps", "steps", K::integer},           {"reason", "reason", K::text},
};
const JsonColumn kMetricView[] = {
    {"m.dataset", "dataset", K::text},
    {"m.state", "state", K::text},
    {"m.job_id", "job_id", K::integer_or_null},
    {"m.node", "node", K::text},
    {"m.failures", "failures", K::integer},
    {"m.category", "category", K::text},
    {"m.reason", "reason", K::text},
    {"(SELECT COUNT(*) FROM metric_trials x WHERE x.metric = m.id)", "after_trials", K::integer},
};

// A report's cells: scores, and why a dataset has none (trials, metric jobs not done).
const JsonColumn kScores[] = {
    {"x.evaluation", "evaluation", K::integer}, {"x.dataset", "dataset", K::text}, {"x.metric", "metric", K::text}, {"x.value", "value", K::real}};
const JsonColumn kUnscoredTrials[] = {
    {"x.evaluation", "evaluation", K::integer}, {"x.datasets", "datasets", K::text}, {"x.state", "state", K::text}, {"x.reason", "reason", K::text}};
const JsonColumn kUnscoredMetrics[] = {
    {"x.evaluation", "evaluation", K::integer}, {"x.dataset", "dataset", K::text}, {"x.state", "state", K::text}, {"x.reason", "reason", K::text}};
const JsonColumn kReportCheckpoints[] = {{"id", "id", K::integer}, {"checkpoint", "checkpoint", K::text}};
const JsonColumn kVersion[] = {{"version", "version", K::integer}, {"uid", "uid", K::integer}};

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
    auto q = db.prepare("SELECT " + select_list(kSummary) + " FROM evaluations e" + where + " ORDER BY e.id");
    bind(q);
    while (q.step()) {
        json e = row_json(kSummary, q, summary_counters());
        index.emplace(e["id"].get<std::int64_t>(), out.size());
        out.push_back(std::move(e));
    }
    if (out.empty()) return out;
    // Each grouped row lands in its evaluation's summary; `apply` says where.
    auto grouped = [&](const std::string& sql, const auto& columns, auto apply) {
        auto g = db.prepare(sql);
        bind(g);
        while (g.step()) {
            const json row = row_json(columns, g);
            if (auto it = index.find(row["evaluation"].get<std::int64_t>()); it != index.end()) apply(out[it->second], row);
        }
    };
    grouped("SELECT " + select_list(kTrialCounts) + " FROM evaluations e JOIN trials t ON t.evaluation = e.id" + where +
                " GROUP BY t.evaluation, t.state",
            kTrialCounts, [](json& e, const json& row) { e["trials"][row["state"].get<std::string>()] = row["n"]; });
    grouped("SELECT " + select_list(kMetricCounts) + " FROM evaluations e JOIN metric_jobs m ON m.evaluation = e.id" + where +
                " GROUP BY m.evaluation, m.state",
            kMetricCounts, [](json& e, const json& row) { e["metric_jobs"][row["state"].get<std::string>()] = row["n"]; });
    grouped("SELECT " + select_list(kRemaining) + " FROM evaluations e JOIN trials t ON t.evaluation = e.id" + where +
                " AND t.state IN ('pending', 'submitting', 'queued', 'running') GROUP BY t.evaluation",
            kRemaining, [](json& e, const json& row) {
                e["remaining_gpu_s"] = row["remaining_gpu_s"];
                e["running_gpus"] = row["running_gpus"];
            });
    // Datasets scored / total: each evaluation's trials, metric jobs and scores, counted by
    // dataset_counts (progress.hpp) the same way `status ID` lists them.
    std::map<std::int64_t, std::array<json, 4>> parts;
    auto collect = [&](std::size_t which) {
        return [&parts, which](json&, const json& row) {
            auto& a = parts[row["evaluation"].get<std::int64_t>()][which];
            if (a.is_null()) a = json::array();
            a.push_back(row);
        };
    };
    grouped("SELECT " + select_list(kDatasetTrials) + " FROM evaluations e JOIN trials t ON t.evaluation = e.id" + where, kDatasetTrials,
            collect(0));
    grouped("SELECT " + select_list(kDatasetMetrics) + " FROM evaluations e JOIN metric_jobs m ON m.evaluation = e.id" + where,
            kDatasetMetrics, collect(1));
    grouped("SELECT " + select_list(kDatasetScores) + " FROM evaluations e JOIN results x ON x.evaluation = e.id" + where, kDatasetScores,
            collect(2));
    grouped("SELECT " + select_list(kDatasetSamples) + " FROM evaluations e JOIN dataset_samples n ON n.evaluation = e.id" + where,
            kDatasetSamples, collect(3));
    for (auto& [id, p] : parts)
        if (auto it = index.find(id); it != index.end())
            out[it->second]["datasets"] = dataset_counts(p[0].is_null() ? json::array() : p[0], p[1].is_null() ? json::array() : p[1],
                                                         p[2].is_null() ? json::array() : p[2], samples_by_dataset(p[3]));
    grouped("SELECT " + select_list(kStaged) + " FROM evaluations e JOIN stagings s ON s.evaluation = e.id" + where +
                " GROUP BY s.evaluation",
            kStaged, [](json& e, const json& row) {
                e["shared_bytes_read"] = row["shared_bytes_read"];
                e["copies"] = row["copies"];
            });
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
    auto t = db.prepare("SELECT " + select_list(kTrialView) + " FROM trials t WHERE t.evaluation = ? ORDER BY t.id");
    t.bind(1, id);
    auto aq = db.prepare("SELECT " + select_list(kAttemptView) + " FROM attempts WHERE trial = ? ORDER BY number");
    while (t.step()) {
        json trial = row_json(kTrialView, t);
        json a = json::array();
        aq.reset();
        aq.bind(1, trial["id"].get<std::int64_t>());
        while (aq.step()) a.push_back(row_json(kAttemptView, aq));
        trial["attempt_list"] = std::move(a);
        trials.push_back(std::move(trial));
    }
    e["trial_list"] = trials;
    json metrics = json::array();
    auto m = db.prepare("SELECT " + select_list(kMetricView) + " FROM metric_jobs m WHERE m.evaluation = ? ORDER BY m.id");
    m.bind(1, id);
    while (m.step()) metrics.push_back(row_json(kMetricView, m));
    e["metric_list"] = metrics;
    auto rows_of = [&](const auto& view, const std::string& table) {
        json out = json::array();
        auto q = db.prepare("SELECT " + select_list(view) + " FROM " + table + " WHERE evaluation = ? ORDER BY id");
        q.bind(1, id);
        while (q.step()) out.push_back(row_json(view, q));
        return out;
    };
    e["stage_list"] = rows_of(kStageView, "stage_jobs");
    e["pilot_list"] = rows_of(kPilotView, "pilots");
    json scores = json::array();
    auto sq = db.prepare("SELECT " + select_list(kDatasetScores) + " FROM results x WHERE x.evaluation = ? ORDER BY x.dataset, x.metric");
    sq.bind(1, id);
    while (sq.step()) scores.push_back(row_json(kDatasetScores, sq));
    json samples = json::array();
    auto nq = db.prepare("SELECT " + select_list(kDatasetSamples) + " FROM dataset_samples n WHERE n.evaluation = ?");
    nq.bind(1, id);
    while (nq.step()) samples.push_back(row_json(kDatasetSamples, nq));
    json progress = dataset_progress(e["trial_list"], metrics, scores, samples_by_dataset(samples));
    e["datasets"] = progress["datasets"];
    e["dataset_list"] = progress["dataset_list"];
    // Retries are trouble a user should see where it happens: which trial, which attempt failed
    // where and why, and when.
    json retries = json::array();
    for (const auto& tr : e["trial_list"]) {
        const auto& attempts = tr["attempt_list"];
        for (std::size_t i = 0; i + 1 < attempts.size(); ++i) {
            const auto& a = attempts[i];
            if (a["state"] != "failed" && a["state"] != "lost") continue;
            std::string cause = a["category"].get<std::string>();
            if (!a["reason"].get<std::string>().empty()) cause += (cause.empty() ? "" : ": ") + a["reason"].get<std::string>();
            retries.push_back({{"kind", "retry"},
                               {"since", a["ended_at"]},
                               {"text", fmt::format("{} retried: attempt {} {}{}{}", tr["datasets"].get<std::string>(), a["number"].get<int>(),
                                                    a["state"].get<std::string>(),
                                                    a["node"].get<std::string>().empty() ? "" : " on " + a["node"].get<std::string>(),
                                                    cause.empty() ? "" : " (" + cause + ")")}});
        }
    }
    // A job slurmctld refused (a QOS or partition limit, a bad account) leaves its trial or
    // metric job waiting, retried every round: trouble a user must see, since only they or an
    // admin can change what Slurm refuses. The refusal's time is not kept, so no "since".
    auto refused = [&](const json& row, const std::string& what) {
        const std::string reason = row.value("reason", "");
        if (reason.starts_with("slurmctld refused"))
            retries.push_back({{"kind", "refused"}, {"since", nullptr},
                               {"text", fmt::format("{}: {}; evalschedd submits it again every round", what, reason)}});
    };
    for (const auto& tr : e["trial_list"])
        if (tr["state"] == "pending") refused(tr, tr["datasets"].get<std::string>());
    for (const auto& m : e["metric_list"])
        if (m.value("state", "") == "waiting") refused(m, "metric job of " + m.value("dataset", std::string()));
    e["retries"] = retries;
    return e;
}

json list_json(Database& db, const Caller& caller) {
    json out = json::array();
    for (auto& e : summaries(db, Which{}, caller)) out.push_back(std::move(e));
    return out;
}

std::optional<std::int64_t> evaluation_version(Database& db, std::int64_t id, const Caller& caller) {
    auto q = db.prepare("SELECT " + select_list(kVersion) + " FROM evaluations WHERE id = ?");
    q.bind(1, id);
    if (!q.step()) return std::nullopt;
    const json row = row_json(kVersion, q);
    if (!may_see(caller, row["uid"].get<std::uint32_t>())) return std::nullopt;
    return row["version"].get<std::int64_t>();
}

std::string report_versions(Database& db, const std::string& name_or_id, const Caller& caller) {
    auto q = db.prepare(
        "SELECT COALESCE(group_concat(id || ':' || version, ','), '') FROM (SELECT id, version FROM evaluations"
        " WHERE (name = ? OR CAST(id AS TEXT) = ?) AND " + visible_to(caller) + " ORDER BY id)");
    q.bind_all(name_or_id, name_or_id);
    q.step();
    return q.column_text(0);  // the one column: the stamp
}

std::optional<json> report_json(Database& db, const std::string& name_or_id, const Caller& caller) {
    json checkpoints = json::array();
    auto q = db.prepare("SELECT " + select_list(kReportCheckpoints) + " FROM evaluations WHERE (name = ? OR CAST(id AS TEXT) = ?) AND " +
                        visible_to(caller) + " ORDER BY submitted_at, id");
    q.bind_all(name_or_id, name_or_id);
    while (q.step()) checkpoints.push_back(row_json(kReportCheckpoints, q));
    if (checkpoints.empty()) return std::nullopt;
    std::map<std::pair<std::string, std::string>, json> rows;  // (dataset, metric) -> {evaluation id: value}
    auto cell_key = [](const json& row) { return std::to_string(row["evaluation"].get<std::int64_t>()); };
    // Every evaluation's scores in one query, and its unscored trials in another.
    const std::string of_evals =
        " JOIN evaluations e ON e.id = x.evaluation WHERE (e.name = ? OR CAST(e.id AS TEXT) = ?) AND " + visible_to(caller, "e");
    auto r = db.prepare("SELECT " + select_list(kScores) + " FROM results x" + of_evals + " ORDER BY x.evaluation, x.dataset, x.metric");
    r.bind_all(name_or_id, name_or_id);
    while (r.step()) {
        const json row = row_json(kScores, r);
        rows[{row["dataset"].get<std::string>(), row["metric"].get<std::string>()}][cell_key(row)] = row["value"];
    }
    // Datasets without a score say why (failed, still running), so a gap is never silent.
    auto f = db.prepare("SELECT " + select_list(kUnscoredTrials) + " FROM trials x" + of_evals +
                        " AND x.state != 'done' ORDER BY x.evaluation, x.id");
    f.bind_all(name_or_id, name_or_id);
    while (f.step()) {
        const json row = row_json(kUnscoredTrials, f);
        TrialRow t;
        t.datasets = row["datasets"].get<std::string>();
        const std::string state = row["state"].get<std::string>();
        for (const auto& d : t.parts())
            rows[{d, ""}][cell_key(row)] = state == "failed" ? "failed: " + row["reason"].get<std::string>() : state;
    }
    // Inference done, the metric job still to score (or failed to).
    auto mq = db.prepare("SELECT " + select_list(kUnscoredMetrics) + " FROM metric_jobs x" + of_evals +
                         " AND x.state != 'done' ORDER BY x.evaluation, x.id");
    mq.bind_all(name_or_id, name_or_id);
    while (mq.step()) {
        const json row = row_json(kUnscoredMetrics, mq);
        auto& cell = rows[{row["dataset"].get<std::string>(), ""}][cell_key(row)];
        if (!cell.is_null()) continue;  // a trial's state says more (still running, failed)
        const std::string state = row["state"].get<std::string>();
        cell = state == "failed" ? "failed: " + row["reason"].get<std::string>() : state == "cancelled" ? state : "scoring";
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
    // What a trial costs before its first sample (store v12), learned per size class and GPU
    // count; listed first, under a name no dataset can have, with the whole list only.
    if (dataset.empty()) {
        std::map<std::pair<std::string, int>, std::deque<double>> startups;
        for (const auto& s : store::recent_startups(db)) startups[{s.size_class, s.gpus}].push_back(s.seconds);
        for (auto& [k, v] : startups) {
            auto [median, p90] = median_p90(v);
            out.push_back({{"dataset", std::string(kStartupRow)}, {"kind", "startup"}, {"size_class", k.first}, {"gpus", k.second}, {"runs", v.size()},
                           {"median_s", median}, {"p90_s", p90}});
        }
    }
    std::map<std::tuple<std::string, std::string, int>, std::deque<double>> runs;
    for (const auto& r : store::recent_prior_runs(db))
        if (dataset.empty() || r.dataset == dataset) runs[{r.dataset, r.size_class, r.gpus}].push_back(r.seconds / r.fraction);
    for (auto& [k, v] : runs) {
        auto [median, p90] = median_p90(v);
        out.push_back({{"dataset", std::get<0>(k)}, {"kind", "run"}, {"size_class", std::get<1>(k)}, {"gpus", std::get<2>(k)}, {"runs", v.size()},
                       {"median_s", median}, {"p90_s", p90}});
    }
    return out;
}

}  // namespace acme::evalsched
