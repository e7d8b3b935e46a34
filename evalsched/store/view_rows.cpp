#include "evalsched/store/view_rows.hpp"

#include "evalsched/store/columns.hpp"

namespace acme::evalsched {
namespace {

using nlohmann::json;
using store::Database;

using K = JsonColumn::Kind;

// An evaluation's summary as its own columns show it; the daemon's summaries add the counters.
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
    // Failed, or waiting for a retry: the deciding line and the log of the attempt that failed.
    {"t.evidence", "evidence", K::text},
    {"t.log", "log", K::text},
    {"(SELECT node FROM attempts a WHERE a.trial = t.id ORDER BY number DESC LIMIT 1)", "node", K::text_or_empty},
    {"(SELECT job_id FROM attempts a WHERE a.trial = t.id ORDER BY number DESC LIMIT 1)", "job_id", K::integer_or_null},
    // mode = pilots: the newest attempt's step in its pilot's job (job_id is the pilot's).
    {"(SELECT step_id FROM attempts a WHERE a.trial = t.id ORDER BY number DESC LIMIT 1)", "step_id", K::integer_or_null},
};
const JsonColumn kAttemptView[] = {
    {"number", "number", K::integer},     {"node", "node", K::text},         {"state", "state", K::text},
    {"job_id", "job_id", K::integer_or_null}, {"category", "category", K::text}, {"reason", "reason", K::text},
    {"ended_at", "ended_at", K::real_or_null}, {"step_id", "step_id", K::integer_or_null},
    {"evidence", "evidence", K::text},        {"log", "log", K::text},
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
    {"m.evidence", "evidence", K::text},
    {"m.log", "log", K::text},
    {"(SELECT COUNT(*) FROM metric_trials x WHERE x.metric = m.id)", "after_trials", K::integer},
};

// A report's cells: scores, and why a dataset has none (trials, metric jobs not done).
const JsonColumn kScores[] = {
    {"x.evaluation", "evaluation", K::integer}, {"x.dataset", "dataset", K::text}, {"x.metric", "metric", K::text}, {"x.value", "value", K::real},
    {"x.info", "info", K::text}};
const JsonColumn kUnscoredTrials[] = {
    {"x.evaluation", "evaluation", K::integer}, {"x.datasets", "datasets", K::text}, {"x.state", "state", K::text}, {"x.reason", "reason", K::text},
    {"x.evidence", "evidence", K::text},        {"x.log", "log", K::text}};
const JsonColumn kUnscoredMetrics[] = {
    {"x.evaluation", "evaluation", K::integer}, {"x.dataset", "dataset", K::text}, {"x.state", "state", K::text}, {"x.reason", "reason", K::text},
    {"x.evidence", "evidence", K::text},        {"x.log", "log", K::text}};
const JsonColumn kReportCheckpoints[] = {{"id", "id", K::integer}, {"checkpoint", "checkpoint", K::text}};

// The rows of a query, each keyed by `columns`.
template <std::size_t N>
std::vector<json> rows_of(store::Statement& q, const JsonColumn (&columns)[N]) {
    std::vector<json> out;
    while (q.step()) out.push_back(row_json(columns, q));
    return out;
}

}  // namespace

SummaryRows summary_rows(Database& db, const Which& which, const Caller& caller) {
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
    SummaryRows out;
    auto q = db.prepare("SELECT " + select_list(kSummary) + " FROM evaluations e" + where + " ORDER BY e.id");
    bind(q);
    out.evaluations = rows_of(q, kSummary);
    if (out.evaluations.empty()) return out;
    // Grouped by evaluation: a fixed number of queries, never a few per evaluation.
    auto grouped = [&](const std::string& sql, const auto& columns) {
        auto g = db.prepare(sql);
        bind(g);
        return rows_of(g, columns);
    };
    out.trial_counts = grouped("SELECT " + select_list(kTrialCounts) + " FROM evaluations e JOIN trials t ON t.evaluation = e.id" + where +
                                   " GROUP BY t.evaluation, t.state",
                               kTrialCounts);
    out.metric_counts = grouped("SELECT " + select_list(kMetricCounts) + " FROM evaluations e JOIN metric_jobs m ON m.evaluation = e.id" +
                                    where + " GROUP BY m.evaluation, m.state",
                                kMetricCounts);
    out.remaining = grouped("SELECT " + select_list(kRemaining) + " FROM evaluations e JOIN trials t ON t.evaluation = e.id" + where +
                                " AND t.state IN ('pending', 'submitting', 'queued', 'running') GROUP BY t.evaluation",
                            kRemaining);
    out.dataset_trials =
        grouped("SELECT " + select_list(kDatasetTrials) + " FROM evaluations e JOIN trials t ON t.evaluation = e.id" + where, kDatasetTrials);
    out.dataset_metrics = grouped("SELECT " + select_list(kDatasetMetrics) + " FROM evaluations e JOIN metric_jobs m ON m.evaluation = e.id" + where,
                                  kDatasetMetrics);
    out.dataset_scores =
        grouped("SELECT " + select_list(kDatasetScores) + " FROM evaluations e JOIN results x ON x.evaluation = e.id" + where, kDatasetScores);
    out.dataset_samples = grouped(
        "SELECT " + select_list(kDatasetSamples) + " FROM evaluations e JOIN dataset_samples n ON n.evaluation = e.id" + where, kDatasetSamples);
    out.staged = grouped("SELECT " + select_list(kStaged) + " FROM evaluations e JOIN stagings s ON s.evaluation = e.id" + where +
                             " GROUP BY s.evaluation",
                         kStaged);
    return out;
}

EvaluationRows evaluation_rows(Database& db, std::int64_t id) {
    EvaluationRows out;
    out.trials = json::array();
    auto t = db.prepare("SELECT " + select_list(kTrialView) + " FROM trials t WHERE t.evaluation = ? ORDER BY t.id");
    t.bind(1, id);
    auto aq = db.prepare("SELECT " + select_list(kAttemptView) + " FROM attempts WHERE trial = ? ORDER BY number");
    while (t.step()) {
        json trial = row_json(kTrialView, t);
        aq.reset();
        aq.bind(1, trial["id"].get<std::int64_t>());
        trial["attempt_list"] = rows_of(aq, kAttemptView);
        out.trials.push_back(std::move(trial));
    }
    auto of_evaluation = [&](const auto& view, const std::string& sql) {
        auto q = db.prepare("SELECT " + select_list(view) + sql);
        q.bind(1, id);
        return json(rows_of(q, view));
    };
    out.metrics = of_evaluation(kMetricView, " FROM metric_jobs m WHERE m.evaluation = ? ORDER BY m.id");
    out.stages = of_evaluation(kStageView, " FROM stage_jobs WHERE evaluation = ? ORDER BY id");
    out.pilots = of_evaluation(kPilotView, " FROM pilots WHERE evaluation = ? ORDER BY id");
    out.scores = of_evaluation(kDatasetScores, " FROM results x WHERE x.evaluation = ? ORDER BY x.dataset, x.metric");
    out.samples = of_evaluation(kDatasetSamples, " FROM dataset_samples n WHERE n.evaluation = ?");
    return out;
}

ReportRows report_rows(Database& db, const std::string& name_or_id, const Caller& caller) {
    ReportRows out;
    auto q = db.prepare("SELECT " + select_list(kReportCheckpoints) + " FROM evaluations WHERE (name = ? OR CAST(id AS TEXT) = ?) AND " +
                        visible_to(caller) + " ORDER BY submitted_at, id");
    q.bind_all(name_or_id, name_or_id);
    out.checkpoints = rows_of(q, kReportCheckpoints);
    if (out.checkpoints.empty()) return out;
    // Every evaluation's scores in one query, and its unscored trials and metric jobs in one each.
    const std::string of_evals =
        " JOIN evaluations e ON e.id = x.evaluation WHERE (e.name = ? OR CAST(e.id AS TEXT) = ?) AND " + visible_to(caller, "e");
    auto r = db.prepare("SELECT " + select_list(kScores) + " FROM results x" + of_evals + " ORDER BY x.evaluation, x.dataset, x.metric");
    r.bind_all(name_or_id, name_or_id);
    out.scores = rows_of(r, kScores);
    auto f = db.prepare("SELECT " + select_list(kUnscoredTrials) + " FROM trials x" + of_evals + " AND x.state != 'done' ORDER BY x.evaluation, x.id");
    f.bind_all(name_or_id, name_or_id);
    out.unscored_trials = rows_of(f, kUnscoredTrials);
    auto m = db.prepare("SELECT " + select_list(kUnscoredMetrics) + " FROM metric_jobs x" + of_evals +
                        " AND x.state != 'done' ORDER BY x.evaluation, x.id");
    m.bind_all(name_or_id, name_or_id);
    out.unscored_metrics = rows_of(m, kUnscoredMetrics);
    return out;
}

}  // namespace acme::evalsched
