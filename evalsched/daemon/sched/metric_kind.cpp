#include "evalsched/daemon/sched/metric_kind.hpp"

#include <cmath>
#include <set>

#include <fmt/format.h>

#include "evalsched/core/decisions.hpp"
#include "evalsched/daemon/evaluations.hpp"
#include "evalsched/daemon/log.hpp"
#include "evalsched/daemon/sched/job_files.hpp"
#include "evalsched/daemon/sched/job_outputs.hpp"
#include "evalsched/daemon/sched/job_script.hpp"
#include "evalsched/daemon/sched/lifecycle.hpp"
#include "evalsched/store/attempts.hpp"

namespace acme::evalsched {

static_assert(JobKind<MetricKind>);

bool MetricKind::start(const MetricRow& waiting, const EvalInfo& e, const std::vector<std::int64_t>& after) {
    if (const auto refused = ensure_dirs(e)) {
        metric_given_up(db_, waiting, "failed", *refused, wall_clock_s());
        log_line("metric job of {} in evaluation {} not started: {}", waiting.dataset, waiting.evaluation, *refused);
        return false;
    }
    MetricRow m = begin_metric(db_, waiting, wall_clock_s());
    m.after_jobs.clear();
    for (const auto id : after) m.after_jobs += fmt::format("{}{}", m.after_jobs.empty() ? "" : ":", id);
    MetricScript ms;
    ms.attempt_dir = attempt_dir(e, m.tag);
    ms.output_dir = fmt::format("{}/{}", e.output_dir, m.dataset);
    std::set<std::string> parts;  // the datasets its trials ran
    for (const auto& id : m.trials)
        if (auto t = load_trial(db_, id)) {
            ms.done_markers.emplace_back(done_marker(e, id), t->trial_key);
            for (const auto& d : t->parts()) parts.insert(d);
        }
    // A suite group's job: no trial runs the group itself, its leaves hold the predictions.
    if (!parts.empty() && !parts.count(m.dataset))
        for (const auto& d : parts) ms.prediction_dirs.push_back(fmt::format("{}/{}", e.output_dir, d));
    ms.command = m.command;
    slurm::BatchJob job = job_for(e, m.tag, config_.partition, {"EVALSCHED_DATASET=" + m.dataset}, load_environment(db_, e.id));
    job.comment = job_comment(fmt::format("evalsched metric {}/{}/{}", e.name, e.checkpoint, m.dataset), m.tag);
    job.script = metric_script(ms);
    // CPU only: no GPUs asked for, so inference's GPUs are free the moment it ends.
    job.time_limit_min = static_cast<std::uint32_t>(std::ceil(metric_time_limit_s(m.estimate_s) / 60));
    job.time_min_min = std::min(job.time_limit_min, static_cast<std::uint32_t>(std::ceil(metric_time_min_s(m.estimate_s) / 60)));
    if (!m.after_jobs.empty()) job.dependency = "afterany:" + m.after_jobs;
    const auto id = submit_job(*this, m, job);
    if (id) log_line("{}: job {}{}", describe(m), *id, m.after_jobs.empty() ? "" : " after " + m.after_jobs);
    return id.has_value();
}

std::optional<std::uint32_t> MetricKind::owner(const MetricRow& m) {
    const auto e = load_evaluation(db_, m.evaluation);
    return e ? std::optional<std::uint32_t>(e->uid) : std::nullopt;
}

std::vector<MetricRow> MetricKind::open() { return metrics_in_state(db_, {"submitting", "queued", "running"}); }

std::string MetricKind::describe(const MetricRow& m) { return fmt::format("metric job of {} in evaluation {}", m.dataset, m.evaluation); }

void MetricKind::adopted(const MetricRow& m, std::int64_t job_id) { metric_submitted(db_, m, job_id, m.after_jobs); }
void MetricKind::lost(const MetricRow& m) { metric_never_submitted(db_, m, ""); }
void MetricKind::refused(const MetricRow& m, const std::string& error) {
    metric_never_submitted(db_, m, "slurmctld refused the metric job: " + error);
}
void MetricKind::submitted(const MetricRow& m, std::int64_t job_id) { metric_submitted(db_, m, job_id, m.after_jobs); }
void MetricKind::running(const MetricRow& m, const std::string& nodes) { metric_running(db_, m, nodes); }
std::vector<MetricRow> MetricKind::to_kill() { return metrics_to_kill(db_); }
void MetricKind::killed(const MetricRow& m) { metric_killed(db_, m, wall_clock_s()); }

void MetricKind::finish(const MetricRow& m, const slurm::JobView* job) {
    auto e = load_evaluation(db_, m.evaluation);
    if (!e) return;
    const MetricOutcome o = judge(m, *e, job);
    finish_metric(db_, m, o, wall_clock_s());
    switch (o.kind) {
    case MetricOutcome::Kind::done: log_line("{} done on {} ({} scores)", describe(m), o.node, o.scores.size()); break;
    case MetricOutcome::Kind::not_ready: log_line("{}: {}; waiting for the retry", describe(m), o.reason); break;
    case MetricOutcome::Kind::failed:
        log_line("{} failed on {}: {} ({}){}", describe(m), o.node, o.reason, o.category, o.retry ? ", retrying" : ", not retried");
        break;
    }
}

MetricOutcome MetricKind::judge(const MetricRow& m, const EvalInfo& e, const slurm::JobView* job) {
    MetricOutcome o;
    o.node = job ? job->nodes : "";
    o.log = log_path(e, m.tag);
    const RunRecord run = read_run(attempt_dir(e, m.tag), e);
    // The script's own exit status: Slurm's, or (the job was purged) the one run.json kept.
    const int exit_code = job ? static_cast<int>(job->exit_code >> 8) : run.exit_code.value_or(-1);
    const bool ok = job ? job->succeeded() : exit_code == 0;
    if (ok) {
        const auto r = read_result_record(fmt::format("{}/{}/result.json", e.output_dir, m.dataset), e);
        if (r.value) {
            o.scores = scores_of(*r.value, m.dataset);
            o.kind = MetricOutcome::Kind::done;
            return o;
        }
        o.category = "script";
        o.reason = r.bad() ? "attempt failed: " + r.problem : "metric job wrote no result.json";
        return o;
    }
    if (job && job->cancelled) {
        // Killed by someone else than evalschedd (which marks its own cancellations first).
        o.category = "unknown";
        o.reason = "metric job cancelled outside evalsched";
    } else if (exit_code == kMetricNotReadyExit) {
        // Chained to a trial attempt that failed: wait for its retry. Submitted with nothing to
        // wait for, a missing marker cannot appear later: that is a failure, not a wait.
        if (!m.after_jobs.empty()) {
            o.kind = MetricOutcome::Kind::not_ready;
            o.reason = "a trial of the dataset had not succeeded when it ran";
            return o;
        }
        o.category = "unknown";
        o.reason = "a finished trial left no inference-done marker";
        return o;
    } else if (exit_code == kNoPredictionsExit) {
        o.category = "script";
        o.reason = fmt::format("no predictions in {}/{}", e.output_dir, m.dataset);
        return o;
    } else {
        const Failure f = diagnose_failure(engine_, log_path(e, m.tag), e, job);
        o.category = f.category;
        o.reason = f.reason;
        o.evidence = f.evidence;
    }
    o.retry = retries(o.category, m.failures + 1, config_.max_attempts);
    return o;
}

}  // namespace acme::evalsched
