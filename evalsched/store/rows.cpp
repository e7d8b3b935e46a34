#include "evalsched/store/rows.hpp"

#include <sstream>

#include <fmt/format.h>

#include "evalsched/store/columns.hpp"

namespace acme::evalsched {
namespace {

using store::Statement;

const Column<EvalInfo> kEval[] = {
    {"id", [](EvalInfo& e, const Statement& q, int i) { e.id = q.column_int(i); }},
    {"name", [](EvalInfo& e, const Statement& q, int i) { e.name = q.column_text(i); }},
    {"checkpoint", [](EvalInfo& e, const Statement& q, int i) { e.checkpoint = q.column_text(i); }},
    {"path", [](EvalInfo& e, const Statement& q, int i) { e.path = q.column_text(i); }},
    {"user", [](EvalInfo& e, const Statement& q, int i) { e.user = q.column_text(i); }},
    {"output_dir", [](EvalInfo& e, const Statement& q, int i) { e.output_dir = q.column_text(i); }},
    {"uid", [](EvalInfo& e, const Statement& q, int i) { e.uid = static_cast<std::uint32_t>(q.column_int(i)); }},
    {"gid", [](EvalInfo& e, const Statement& q, int i) { e.gid = static_cast<std::uint32_t>(q.column_int(i)); }},
    {"checkpoint_bytes", [](EvalInfo& e, const Statement& q, int i) { e.checkpoint_bytes = q.column_double(i); }},
    {"params_b", [](EvalInfo& e, const Statement& q, int i) { e.params_b = q.column_double(i); }},
    {"submitted_at", [](EvalInfo& e, const Statement& q, int i) { e.submitted_at = q.column_double(i); }},
    {"priority", [](EvalInfo& e, const Statement& q, int i) { e.priority = static_cast<int>(q.column_int(i)); }},
};

const Column<TrialRow> kTrial[] = {
    {"id", [](TrialRow& t, const Statement& q, int i) { t.id = q.column_int(i); }},
    {"evaluation", [](TrialRow& t, const Statement& q, int i) { t.evaluation = q.column_int(i); }},
    {"trial_key", [](TrialRow& t, const Statement& q, int i) { t.trial_key = q.column_text(i); }},
    {"datasets", [](TrialRow& t, const Statement& q, int i) { t.datasets = q.column_text(i); }},
    {"command", [](TrialRow& t, const Statement& q, int i) { t.command = q.column_text(i); }},
    {"excluded_nodes", [](TrialRow& t, const Statement& q, int i) { t.excluded_nodes = q.column_text(i); }},
    {"state", [](TrialRow& t, const Statement& q, int i) { t.state = q.column_text(i); }},
    {"shard", [](TrialRow& t, const Statement& q, int i) { t.shard = static_cast<int>(q.column_int(i)); }},
    {"num_shards", [](TrialRow& t, const Statement& q, int i) { t.num_shards = static_cast<int>(q.column_int(i)); }},
    {"gpus", [](TrialRow& t, const Statement& q, int i) { t.gpus = static_cast<int>(q.column_int(i)); }},
    {"attempts", [](TrialRow& t, const Statement& q, int i) { t.attempts = static_cast<int>(q.column_int(i)); }},
    {"median_s", [](TrialRow& t, const Statement& q, int i) { t.median_s = q.column_double(i); }},
    {"p90_s", [](TrialRow& t, const Statement& q, int i) { t.p90_s = q.column_double(i); }},
    {"startup_s", [](TrialRow& t, const Statement& q, int i) { t.startup_s = q.column_double(i); }},
    {"metric_s", [](TrialRow& t, const Statement& q, int i) { t.metric_s = q.column_double(i); }},
    {"conservative", [](TrialRow& t, const Statement& q, int i) { t.conservative = q.column_int(i) != 0; }},
};

const Column<AttemptRow> kAttempt[] = {
    {"id", [](AttemptRow& a, const Statement& q, int i) { a.id = q.column_int(i); }},
    {"trial", [](AttemptRow& a, const Statement& q, int i) { a.trial = q.column_int(i); }},
    {"number", [](AttemptRow& a, const Statement& q, int i) { a.number = static_cast<int>(q.column_int(i)); }},
    {"tag", [](AttemptRow& a, const Statement& q, int i) { a.tag = q.column_text(i); }},
    {"node", [](AttemptRow& a, const Statement& q, int i) { a.node = q.column_text(i); }},
    {"state", [](AttemptRow& a, const Statement& q, int i) { a.state = q.column_text(i); }},
    {"job_id", [](AttemptRow& a, const Statement& q, int i) { a.job_id = q.column_optional_int(i); }},
    {"submitted_at", [](AttemptRow& a, const Statement& q, int i) { a.submitted_at = q.column_optional_double(i).value_or(0); }},
    {"pilot", [](AttemptRow& a, const Statement& q, int i) { a.pilot = q.column_optional_int(i); }},
};

const Column<MetricRow> kMetric[] = {
    {"id", [](MetricRow& m, const Statement& q, int i) { m.id = q.column_int(i); }},
    {"evaluation", [](MetricRow& m, const Statement& q, int i) { m.evaluation = q.column_int(i); }},
    {"dataset", [](MetricRow& m, const Statement& q, int i) { m.dataset = q.column_text(i); }},
    {"command", [](MetricRow& m, const Statement& q, int i) { m.command = q.column_text(i); }},
    {"tag", [](MetricRow& m, const Statement& q, int i) { m.tag = q.column_optional_text(i).value_or(""); }},
    {"state", [](MetricRow& m, const Statement& q, int i) { m.state = q.column_text(i); }},
    {"submissions", [](MetricRow& m, const Statement& q, int i) { m.submissions = static_cast<int>(q.column_int(i)); }},
    {"failures", [](MetricRow& m, const Statement& q, int i) { m.failures = static_cast<int>(q.column_int(i)); }},
    {"estimate_s", [](MetricRow& m, const Statement& q, int i) { m.estimate_s = q.column_double(i); }},
    {"job_id", [](MetricRow& m, const Statement& q, int i) { m.job_id = q.column_optional_int(i); }},
    {"after_jobs", [](MetricRow& m, const Statement& q, int i) { m.after_jobs = q.column_text(i); }},
};

}  // namespace

std::string visible_to(const Caller& caller, std::string_view alias) {
    return fmt::format("({} OR {}{}uid = {})", caller.admin ? 1 : 0, alias, alias.empty() ? "" : ".", caller.uid);
}

bool may_see(const Caller& caller, std::uint32_t owner_uid) { return caller.admin || owner_uid == caller.uid; }

std::vector<std::string> TrialRow::parts() const {
    std::vector<std::string> out;
    std::stringstream ss(datasets);
    std::string d;
    while (std::getline(ss, d, ',')) out.push_back(d);
    return out;
}

std::string add_node(const std::string& list, const std::string& node) {
    if (node.empty() || (',' + list + ',').find(',' + node + ',') != std::string::npos) return list;
    return list + (list.empty() ? "" : ",") + node;
}

std::string eval_columns(std::string_view alias) { return select_list(kEval, alias); }
EvalInfo eval_from(const Statement& q) { return read_row(kEval, q); }
std::string trial_columns(std::string_view alias) { return select_list(kTrial, alias); }
TrialRow trial_from(const Statement& q) { return read_row(kTrial, q); }
std::string attempt_columns(std::string_view alias) { return select_list(kAttempt, alias); }
AttemptRow attempt_from(const Statement& q) { return read_row(kAttempt, q); }
std::string metric_columns(std::string_view alias) { return select_list(kMetric, alias); }
MetricRow metric_from(const Statement& q) { return read_row(kMetric, q); }

// Whether the caller may see evaluation `id`; false also when it does not exist.
bool visible(store::Database& db, std::int64_t id, const Caller& c) {
    auto q = db.prepare("SELECT uid FROM evaluations WHERE id = ?");
    q.bind(1, id);
    if (!q.step()) return false;
    return may_see(c, static_cast<std::uint32_t>(q.column_int(0)));
}

std::string instance_id(store::Database& db) {
    auto q = db.prepare("SELECT id FROM instance LIMIT 1");
    return q.step() ? q.column_text(0) : std::string("0");
}

}  // namespace acme::evalsched
