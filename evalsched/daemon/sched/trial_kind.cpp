#include "evalsched/daemon/sched/trial_kind.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "evalsched/core/cost_model.hpp"
#include "evalsched/core/decisions.hpp"
#include "evalsched/daemon/evaluations.hpp"
#include "evalsched/daemon/sched/job_files.hpp"
#include "evalsched/daemon/sched/job_outputs.hpp"
#include "evalsched/daemon/sched/job_script.hpp"
#include "evalsched/daemon/sched/lifecycle.hpp"
#include "evalsched/daemon/log.hpp"
#include "evalsched/daemon/metric_jobs.hpp"

namespace acme::evalsched {

static_assert(JobKind<TrialKind>);

TrialScript trial_script_for(const DaemonConfig& config, store::Database& db, const EvalInfo& e, const TrialRow& t, const std::string& tag) {
    TrialScript ts;
    set_staging(ts, config, db, e, attempt_dir(e, tag));
    for (const auto& d : t.parts()) ts.result_files.push_back(part_dir(e, t, d) + "/result.json");
    ts.done_marker = done_marker(e, t.id);
    ts.command = t.command;
    return ts;
}

void TrialKind::finish_step(const AttemptRow& a, std::optional<int> wait_status) {
    auto t = load_trial(db_, a.trial);
    if (!t) return;
    auto e = load_evaluation(db_, t->evaluation);
    if (!e) return;
    if (!wait_status) {
        // Adopted after a restart: the wrapper's run.json is all that says how it went.
        const RunRecord run = read_run(attempt_dir(*e, a.tag), *e);
        wait_status = run.exit_code ? (*run.exit_code & 0xff) << 8 : 1 << 8;
    }
    const slurm::JobView step = slurm::step_view(static_cast<std::uint32_t>(a.job_id.value_or(0)), *wait_status, a.node);
    const Outcome o = judge(a, *t, *e, &step);
    finish_attempt(db_, a, o, size_class(e->params_b), wall_clock_s());
    if (o.success) log_line("trial {} done in a step of job {} on {} ({} scores)", t->trial_key, a.job_id.value_or(0), o.node, o.scores.size());
    else if (o.cancelled) log_line("trial {} cancelled", t->trial_key);
    else log_line("trial {} attempt {} failed in a step of job {} on {}: {} ({}){}", t->trial_key, a.number, a.job_id.value_or(0), o.node, o.reason,
                  o.category, o.retry ? fmt::format(", retrying{}", o.exclude_node.empty() ? "" : " without " + o.exclude_node) : ", not retried");
}

bool TrialKind::start(const TrialRow& t, const EvalInfo& e, const std::string& node, double time_limit_s, const std::string& dependency) {
    if (const auto refused = ensure_dirs(e)) {
        trial_cannot_start(db_, t, *refused, wall_clock_s());
        log_line("trial {} not started: {}", t.trial_key, *refused);
        return false;
    }
    const AttemptRow a = begin_attempt(db_, t, node, time_limit_s, wall_clock_s());
    const TrialScript ts = trial_script_for(config_, db_, e, t, a.tag);
    slurm::BatchJob job = job_for(e, a.tag, config_.partition, {"EVALSCHED_TRIAL=" + t.trial_key}, load_environment(db_, e.id));
    job.comment = job_comment("evalsched trial " + t.trial_key, a.tag);
    job.script = trial_script(ts);
    job.time_limit_min = static_cast<std::uint32_t>(std::ceil(time_limit_s / 60));
    job.gpus_per_node = t.gpus;
    job.required_node = node;
    job.excluded_nodes = t.excluded_nodes;
    job.dependency = dependency;
    const auto id = submit_job(*this, a, job);
    if (id)
        log_line("trial {} attempt {}: job {} on {} with --time {}{}", t.trial_key, a.number, *id, node, job.time_limit_min,
                 dependency.empty() ? "" : " after " + dependency);
    return id.has_value();
}

std::optional<std::uint32_t> TrialKind::owner(const AttemptRow& a) {
    const auto t = load_trial(db_, a.trial);
    const auto e = t ? load_evaluation(db_, t->evaluation) : std::nullopt;
    return e ? std::optional<std::uint32_t>(e->uid) : std::nullopt;
}

std::vector<AttemptRow> TrialKind::open() { return open_attempts(db_); }

std::string TrialKind::describe(const AttemptRow& a) {
    const auto t = load_trial(db_, a.trial);
    return fmt::format("trial {} attempt {}", t ? t->trial_key : std::to_string(a.trial), a.number);
}

void TrialKind::adopted(const AttemptRow& a, std::int64_t job_id) { attempt_submitted(db_, a, job_id); }
void TrialKind::lost(const AttemptRow& a) { attempt_never_submitted(db_, a, ""); }
// The prefix is what the API shows as "refused" trouble (views.cpp).
void TrialKind::refused(const AttemptRow& a, const std::string& error) { attempt_never_submitted(db_, a, "slurmctld refused the trial's job: " + error); }
void TrialKind::submitted(const AttemptRow& a, std::int64_t job_id) { attempt_submitted(db_, a, job_id); }
void TrialKind::running(const AttemptRow& a, const std::string& nodes) { attempt_running(db_, a, nodes); }
std::vector<AttemptRow> TrialKind::to_kill() { return attempts_to_cancel(db_); }
void TrialKind::killed(const AttemptRow& a) { attempt_cancelled(db_, a, wall_clock_s()); }

void TrialKind::finish(const AttemptRow& a, const slurm::JobView* job) {
    auto t = load_trial(db_, a.trial);
    if (!t) return;
    // The stage job it waited on failed and slurmctld (kill_invalid_depend) cancelled it before
    // it ran: like a withdrawn dependent (Scheduler::withdraw_orphans), placed again, the try
    // not counted; the node's stage retry, or the trial staging itself, comes next.
    if (job && job->dependency_killed && a.state == "queued") {
        attempt_withdrawn(db_, a, "its stage job failed; placed again");
        log_line("trial {} attempt {}: job {} was cancelled by slurmctld (its stage job failed, kill_invalid_depend); placed again next round",
                 t->trial_key, a.number, job->job_id);
        return;
    }
    auto e = load_evaluation(db_, t->evaluation);
    if (!e) return;
    const Outcome o = judge(a, *t, *e, job);
    finish_attempt(db_, a, o, size_class(e->params_b), wall_clock_s());
    if (o.ended_at > 0) freed_at_.push_back(o.ended_at);
    if (o.success) log_line("trial {} done on {} ({} scores)", t->trial_key, o.node, o.scores.size());
    else if (o.cancelled) log_line("trial {} cancelled", t->trial_key);
    else log_line("trial {} attempt {} failed on {}: {} ({}){}", t->trial_key, a.number, o.node, o.reason, o.category,
                  o.retry ? fmt::format(", retrying{}", o.exclude_node.empty() ? "" : " without " + o.exclude_node) : ", not retried");
}

Outcome TrialKind::judge(const AttemptRow& a, const TrialRow& t, const EvalInfo& e, const slurm::JobView* job) {
    Outcome o;
    o.node = job && !job->nodes.empty() ? job->nodes : a.node;
    o.log = log_path(e, a.tag);
    const std::string dir = attempt_dir(e, a.tag);
    const auto stage = read_stage_record(dir, e);
    if (stage.value) o.stage = Outcome::Stage{stage.value->copied, stage.value->bytes, stage.value->seconds};
    std::string run_problem;
    const RunRecord run = read_run(dir, e, &run_problem);
    o.exit_code = run.exit_code;
    o.run_s = run.seconds;
    if (job && job->start_time > 0) o.ended_at = std::max(static_cast<double>(job->end_time), run.end.value_or(0));
    if (t.state == "cancelled") {
        o.cancelled = true;
        return o;
    }
    // A record the job's user overwrote with something else: the attempt fails, saying which
    // file and what is wrong, and is not retried (it would be overwritten again).
    if (const std::string& why = stage.bad() ? stage.problem : run_problem; !why.empty()) {
        o.category = "script";
        o.reason = "attempt failed: " + why;
        o.retry = false;
        return o;
    }
    // Inference succeeded: Slurm says so, or (the job was purged) the wrapper recorded exit 0.
    const bool inference_ok = job ? job->succeeded() : (o.exit_code && *o.exit_code == 0);
    if (inference_ok) {
        // A dataset with a metric job is scored by that job, over all its trials' predictions;
        // the others wrote their scores here.
        const std::set<std::string> by_metric = metric_datasets(db_, e.id);
        // Inference the parts reported; nullopt once one part did not say (no startup then).
        std::optional<double> inference = 0.0;
        for (const auto& d : t.parts()) {
            const auto result = read_result_record(part_dir(e, t, d) + "/result.json", e);
            const std::optional<nlohmann::json>& r = result.value;
            if ((!r && !by_metric.count(d)) || result.bad()) {
                // The output check: a run that wrote no result is the evaluation's bug, not the node's.
                o.category = "script";
                o.reason = result.bad() ? fmt::format("attempt failed: {} of {}", result.problem, d) : fmt::format("no result.json written for {}", d);
                o.retry = false;
                o.scores.clear();
                o.success = false;
                return o;
            }
            // A part scored by its metric job may still have said how long it inferred.
            const std::optional<double> inferred =
                r && r->contains("inference_s") ? std::optional((*r)["inference_s"].get<double>()) : std::nullopt;
            if (inference && inferred && *inferred >= 0) *inference += *inferred;
            else inference.reset();
            if (by_metric.count(d)) continue;
            for (auto& s : scores_of(*r, d)) o.scores.push_back(std::move(s));
        }
        if (t.parts().size() == 1 && inference) o.run_s = *inference;
        o.startup_s = measured_startup(run, inference);
        o.success = true;
        return o;
    }
    // Failed: ask the diagnosis engine whether the node or the evaluation is to blame.
    const Failure f = diagnose_failure(engine_, log_path(e, a.tag), e, job);
    o.category = f.category;
    o.reason = f.reason;
    o.evidence = f.evidence;
    o.retry = retries(f.category, t.attempts, config_.max_attempts);
    o.exclude_node = node_to_avoid(f.category, o.node);
    return o;
}

}  // namespace acme::evalsched
