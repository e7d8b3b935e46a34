#include "evalsched/daemon/views.hpp"

#include <array>
#include <deque>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "evalsched/core/priors.hpp"
#include "evalsched/daemon/sched/progress.hpp"
#include "evalsched/store/priors.hpp"
#include "evalsched/store/view_rows.hpp"

namespace acme::evalsched {
namespace {

using nlohmann::json;
using store::Database;

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

// {dataset: samples} from kDatasetSamples rows (null: none).
json samples_by_dataset(const json& rows) {
    json out = json::object();
    if (rows.is_array())
        for (const auto& r : rows) out[r["dataset"].get<std::string>()] = r["samples"];
    return out;
}

// Summaries of the evaluations `which` names, in id order, from the store's rows
// (summary_rows: a fixed number of queries however many evaluations there are).
std::vector<json> summaries(Database& db, const Which& which, const Caller& caller) {
    SummaryRows rows = summary_rows(db, which, caller);
    std::vector<json> out;
    std::map<std::int64_t, std::size_t> index;
    for (const json& row : rows.evaluations) {
        json e = summary_counters();
        for (const auto& [key, value] : row.items()) e[key] = value;
        index.emplace(e["id"].get<std::int64_t>(), out.size());
        out.push_back(std::move(e));
    }
    // Each grouped row lands in its evaluation's summary; `apply` says where.
    auto grouped = [&](const std::vector<json>& group, auto apply) {
        for (const json& row : group)
            if (auto it = index.find(row["evaluation"].get<std::int64_t>()); it != index.end()) apply(out[it->second], row);
    };
    grouped(rows.trial_counts, [](json& e, const json& row) { e["trials"][row["state"].get<std::string>()] = row["n"]; });
    grouped(rows.metric_counts, [](json& e, const json& row) { e["metric_jobs"][row["state"].get<std::string>()] = row["n"]; });
    grouped(rows.remaining, [](json& e, const json& row) {
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
    grouped(rows.dataset_trials, collect(0));
    grouped(rows.dataset_metrics, collect(1));
    grouped(rows.dataset_scores, collect(2));
    grouped(rows.dataset_samples, collect(3));
    for (auto& [id, p] : parts)
        if (auto it = index.find(id); it != index.end())
            out[it->second]["datasets"] = dataset_counts(p[0].is_null() ? json::array() : p[0], p[1].is_null() ? json::array() : p[1],
                                                         p[2].is_null() ? json::array() : p[2], samples_by_dataset(p[3]));
    grouped(rows.staged, [](json& e, const json& row) {
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
    EvaluationRows rows = evaluation_rows(db, id);
    e["trial_list"] = std::move(rows.trials);
    e["metric_list"] = rows.metrics;
    e["stage_list"] = std::move(rows.stages);
    e["pilot_list"] = std::move(rows.pilots);
    json progress = dataset_progress(e["trial_list"], rows.metrics, rows.scores, samples_by_dataset(rows.samples));
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

std::optional<json> report_json(Database& db, const std::string& name_or_id, const Caller& caller) {
    const ReportRows found = report_rows(db, name_or_id, caller);
    if (found.checkpoints.empty()) return std::nullopt;
    std::map<std::pair<std::string, std::string>, json> rows;  // (dataset, metric) -> {evaluation id: value}
    auto cell_key = [](const json& row) { return std::to_string(row["evaluation"].get<std::int64_t>()); };
    // Beside each value, what the harness's table shows for it (result.json "details", store
    // v15): the metric's own name and filter, the task's version and n-shot, the mode, and the
    // stderr per checkpoint. A field that differs between checkpoints (a newer task version)
    // lists each value once, "2/3".
    std::map<std::pair<std::string, std::string>, json> about;
    for (const json& row : found.scores) {
        const std::pair<std::string, std::string> key{row["dataset"].get<std::string>(), row["metric"].get<std::string>()};
        rows[key][cell_key(row)] = row["value"];
        const json info = json::parse(row.value("info", ""), nullptr, false);
        if (!info.is_object()) continue;
        json& a = about[key];
        for (const char* f : {"measure", "filter", "version", "n_shot", "mode"}) {
            if (!info.contains(f) || !(info[f].is_string() || info[f].is_number())) continue;
            const std::string v = info[f].is_string() ? info[f].get<std::string>() : info[f].dump();
            if (!a.contains(f)) a[f] = info[f];
            else if (const std::string was = a[f].is_string() ? a[f].get<std::string>() : a[f].dump();
                     was != v && ("/" + was + "/").find("/" + v + "/") == std::string::npos)
                a[f] = was + "/" + v;
        }
        if (info.contains("stderr") && info["stderr"].is_number()) a["stderr"][cell_key(row)] = info["stderr"];
    }
    // Datasets without a score say why (failed, still running), so a gap is never silent; each
    // failure once more in "failures", with the line that decided it and its job's log, which
    // a cell has no room for.
    json failures = json::array();
    std::set<std::pair<std::string, std::string>> failed;  // (dataset, evaluation) listed
    auto add_failure = [&](const std::string& dataset, const json& row, const std::string& reason) {
        if (!failed.emplace(dataset, cell_key(row)).second) return;
        failures.push_back({{"dataset", dataset}, {"evaluation", row["evaluation"]}, {"reason", reason},
                            {"evidence", row.value("evidence", "")}, {"log", row.value("log", "")}});
    };
    for (const json& row : found.unscored_trials) {
        TrialRow t;
        t.datasets = row["datasets"].get<std::string>();
        const std::string state = row["state"].get<std::string>();
        for (const auto& d : t.parts()) {
            rows[{d, ""}][cell_key(row)] = state == "failed" ? "failed: " + row["reason"].get<std::string>() : state;
            if (state == "failed") add_failure(d, row, row["reason"].get<std::string>());
        }
    }
    // Inference done, the metric job still to score (or failed to).
    for (const json& row : found.unscored_metrics) {
        auto& cell = rows[{row["dataset"].get<std::string>(), ""}][cell_key(row)];
        if (!cell.is_null()) continue;  // a trial's state says more (still running, failed)
        const std::string state = row["state"].get<std::string>();
        cell = state == "failed" ? "failed: " + row["reason"].get<std::string>() : state == "cancelled" ? state : "scoring";
        if (state == "failed") add_failure(row["dataset"].get<std::string>(), row, "metric job: " + row["reason"].get<std::string>());
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
        json row{{"dataset", key.first}, {"metric", key.second}, {"values", cells}};
        if (auto a = about.find(key); a != about.end())
            for (auto& [f, v] : a->second.items()) row[f] = v;
        out_rows.push_back(std::move(row));
    }
    return json{{"name", name_or_id}, {"checkpoints", found.checkpoints}, {"rows", out_rows}, {"failures", failures}};
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
