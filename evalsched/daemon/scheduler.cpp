#include "evalsched/daemon/scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <set>

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/store/evalsched_store.hpp"
#include "evalsched/core/cost_model.hpp"
#include "evalsched/core/decisions.hpp"
#include "evalsched/core/planner.hpp"
#include "evalsched/daemon/job_script.hpp"
#include "evalsched/daemon/log.hpp"
#include "evalsched/daemon/user_files.hpp"

namespace acme::evalsched {
namespace {

using nlohmann::json;

double now_s() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

std::string attempt_dir(const EvalInfo& e, const std::string& tag) { return fmt::format("{}/attempts/{}", e.output_dir, tag); }
// Present once the trial's command succeeded (job_script.hpp): what its metric jobs check.
std::string done_marker(const EvalInfo& e, std::int64_t trial) { return fmt::format("{}/inference-done/{}", e.output_dir, trial); }
std::string log_path(const EvalInfo& e, const std::string& tag) { return fmt::format("{}/logs/{}.out", e.output_dir, tag); }

// Where the core renders {output} for a part (trials.cpp output_dir): the result lands there.
std::string part_dir(const EvalInfo& e, const TrialRow& t, const std::string& dataset) {
    if (t.num_shards == 1) return fmt::format("{}/{}", e.output_dir, dataset);
    return fmt::format("{}/{}/shard-{}-of-{}", e.output_dir, dataset, t.shard, t.num_shards);
}

std::optional<json> read_json(const std::string& path, const EvalInfo& e) {
    auto text = read_as_user(path, e.uid, e.gid, 1 << 20);
    if (!text) return std::nullopt;
    json j = json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return std::nullopt;
    return j;
}

// The run's exit status and seconds from the wrapper's run.json (a purged job leaves only it).
struct RunRecord {
    std::optional<int> exit_code;
    std::optional<double> seconds;
};
RunRecord read_run(const std::string& dir, const EvalInfo& e) {
    RunRecord r;
    if (auto run = read_json(dir + "/run.json", e)) {
        r.exit_code = run->value("exit_code", -1);
        r.seconds = run->value("end", 0.0) - run->value("start", 0.0);
    }
    return r;
}

// Numeric scores of a result.json: {"scores": {...}} or the object itself.
std::vector<Outcome::Score> scores_of(const json& r, const std::string& dataset) {
    std::vector<Outcome::Score> out;
    const json& scores = r.contains("scores") ? r["scores"] : r;
    if (!scores.is_object()) return out;
    for (auto it = scores.begin(); it != scores.end(); ++it)
        if (it->is_number()) out.push_back({dataset, it.key(), it->get<double>()});
    return out;
}

}  // namespace

Scheduler::Scheduler(const DaemonConfig& config, store::Database db, std::optional<diagnose::Engine> engine,
                     std::atomic<int>* cluster_gpus)
    : config_(config), db_(std::move(db)), engine_(std::move(engine)), cluster_gpus_(cluster_gpus) {}

void Scheduler::tick() noexcept {
    try {
        // Priors are re-read each round: the finished trials of the last round refine them.
        priors_ = PriorBook();
        for (const auto& r : store::recent_prior_runs(db_)) priors_.add_run({r.dataset, r.size_class, r.gpus}, r.seconds, r.fraction);
        for (const auto& l : store::recent_model_loads(db_)) priors_.add_stage(l.node, l.bytes, l.seconds);
        std::string error;
        auto jobs = slurm::load_jobs(error);
        if (!jobs) {
            log_line("cannot ask slurmctld for jobs ({}); trying again next round", error);
            return;
        }
        const TagIndex by_tag = index_by_tag(*jobs);
        reconcile(by_tag);
        reconcile_metrics(by_tag);
        cancel_jobs(by_tag);
        auto nodes = slurm::load_node_gpus(error);
        if (!nodes) {
            log_line("cannot ask slurmctld for nodes ({}); trying again next round", error);
            return;
        }
        if (cluster_gpus_) cluster_gpus_->store(slurm::usable_gpus(*nodes));
        plan_and_submit(*jobs, *nodes);
        // After placing trials: a dataset whose last trial was just queued gets its metric job now.
        submit_metrics();
    } catch (const std::exception& ex) {
        log_line("scheduling round failed: {}", ex.what());
    } catch (...) {
        log_line("scheduling round failed");
    }
}

Scheduler::TagIndex Scheduler::index_by_tag(const std::vector<slurm::JobView>& jobs) {
    // The newest job of a tag wins: after a requeue Slurm keeps the id, so there is one.
    TagIndex by_tag;
    for (const auto& j : jobs)
        if (j.name.starts_with("evalsched-")) {
            auto& slot = by_tag[j.name];
            if (!slot || slot->job_id < j.job_id) slot = &j;
        }
    return by_tag;
}

namespace {
const slurm::JobView* find_tag(const std::map<std::string, const slurm::JobView*>& by_tag, const std::string& tag) {
    auto it = by_tag.find(tag);
    return it == by_tag.end() ? nullptr : it->second;
}
}  // namespace

void Scheduler::reconcile(const TagIndex& by_tag) {
    for (AttemptRow a : open_attempts(db_)) {
        auto t = load_trial(db_, a.trial);
        if (!t) continue;
        auto e = load_evaluation(db_, t->evaluation);
        if (!e) continue;
        const slurm::JobView* job = find_tag(by_tag, a.tag);
        if (a.state == "submitting") {
            // The daemon died between marking the attempt and recording its job: the tag says
            // whether slurmctld took it. Never submit the same attempt twice.
            if (!job) {
                log_line("trial {} attempt {}: no job tagged {} after a restart; submitting it again", t->trial_key, a.number, a.tag);
                attempt_never_submitted(db_, a, "");
                continue;
            }
            attempt_submitted(db_, a, job->job_id);
            log_line("trial {} attempt {}: adopted job {} found by its tag after a restart", t->trial_key, a.number, job->job_id);
            a.state = "queued";
            a.job_id = job->job_id;
        }
        if (job && job->job_id != a.job_id.value_or(0)) continue;  // not ours (a reused name)
        if (job && job->active()) {
            if (!job->pending() && a.state != "running") attempt_running(db_, a, job->nodes);
            continue;
        }
        const Outcome o = judge(a, *t, *e, job);
        finish_attempt(db_, a, o, size_class(e->params_b), now_s());
        if (o.success) log_line("trial {} done on {} ({} scores)", t->trial_key, o.node, o.scores.size());
        else if (o.cancelled) log_line("trial {} cancelled", t->trial_key);
        else log_line("trial {} attempt {} failed on {}: {} ({}){}", t->trial_key, a.number, o.node, o.reason, o.category,
                      o.retry ? fmt::format(", retrying{}", o.exclude_node.empty() ? "" : " without " + o.exclude_node) : ", not retried");
    }
}

Outcome Scheduler::judge(const AttemptRow& a, const TrialRow& t, const EvalInfo& e, const slurm::JobView* job) {
    Outcome o;
    o.node = job && !job->nodes.empty() ? job->nodes : a.node;
    const std::string dir = attempt_dir(e, a.tag);
    if (auto s = read_json(dir + "/stage.json", e)) {
        o.stage = Outcome::Stage{s->value("copied", 0) != 0, s->value("bytes", 0.0), s->value("seconds", 0.0)};
    }
    const RunRecord run = read_run(dir, e);
    o.exit_code = run.exit_code;
    o.run_s = run.seconds;
    if (t.state == "cancelled") {
        o.cancelled = true;
        return o;
    }
    // Inference succeeded: Slurm says so, or (the job was purged) the wrapper recorded exit 0.
    const bool inference_ok = job ? job->succeeded() : (o.exit_code && *o.exit_code == 0);
    if (inference_ok) {
        // A dataset with a metric job is scored by that job, over all its trials' predictions;
        // the others wrote their scores here.
        const std::set<std::string> by_metric = metric_datasets(db_, e.id);
        for (const auto& d : t.parts()) {
            if (by_metric.count(d)) continue;
            auto r = read_json(part_dir(e, t, d) + "/result.json", e);
            if (!r) {
                // The output check: a run that wrote no result is the evaluation's bug, not the node's.
                o.category = "script";
                o.reason = fmt::format("no result.json written for {}", d);
                o.retry = false;
                o.scores.clear();
                return o;
            }
            for (auto& s : scores_of(*r, d)) o.scores.push_back(std::move(s));
            if (r->contains("inference_s") && (*r)["inference_s"].is_number() && t.parts().size() == 1) o.run_s = (*r)["inference_s"].get<double>();
        }
        o.success = true;
        return o;
    }
    // Failed: ask the diagnosis engine whether the node or the evaluation is to blame.
    const auto [category, reason] = diagnose_failure(log_path(e, a.tag), e, job);
    o.category = category;
    o.reason = reason;
    o.retry = retries(category, t.attempts, config_.max_attempts);
    o.exclude_node = node_to_avoid(category, o.node);
    return o;
}

std::pair<std::string, std::string> Scheduler::diagnose_failure(const std::string& log, const EvalInfo& e, const slurm::JobView* job) {
    const std::string tail = read_as_user(log, e.uid, e.gid, 256 * 1024).value_or("");
    diagnose::JobEnd end;
    end.log = tail;
    if (job) {
        end.job_exit = diagnose::from_wait_status(static_cast<int>(job->exit_code));
        end.time_limit = job->timeout;
        end.node_failure = job->node_fail;
        end.cancelled = job->cancelled;
        end.oom_kill = job->oom;
    }
    std::string category = "unknown", reason = job ? "exit " + std::to_string(job->exit_code >> 8) : "job vanished from slurmctld";
    if (job && (job->exit_code >> 8) == kStageFailedExit) {
        category = "infrastructure";
        reason = "staging_failed";
    } else if (end.node_failure) {
        category = "infrastructure";
        reason = "node_failure";
    } else if (engine_) {
        const diagnose::Diagnosis d = diagnose::diagnose_noexcept(*engine_, end);
        category = std::string(diagnose::to_string(d.category));
        if (d.reason != "unknown") reason = d.reason;
    }
    return {category, reason};
}

void Scheduler::cancel_jobs(const TagIndex& by_tag) {
    for (const auto& a : attempts_to_cancel(db_)) {
        std::string error;
        if (a.job_id && !slurm::cancel_job(static_cast<std::uint32_t>(*a.job_id), error)) {
            log_line("cannot cancel the job of {}: {}; trying again next round", a.tag, error);
            continue;
        }
        attempt_cancelled(db_, a, now_s());
    }
    for (const auto& m : metrics_to_kill(db_)) {
        // A job id, or (the daemon died while submitting it) the job its tag finds.
        std::optional<std::int64_t> id = m.job_id;
        if (const slurm::JobView* job = find_tag(by_tag, m.tag); !id && job) id = job->job_id;
        std::string error;
        if (id && !slurm::cancel_job(static_cast<std::uint32_t>(*id), error)) {
            log_line("cannot cancel the metric job {}: {}; trying again next round", m.tag, error);
            continue;
        }
        metric_killed(db_, m, now_s());
    }
}

void Scheduler::ensure_dirs(const EvalInfo& e) {
    // Created by the daemon (root), then handed to the user: Slurm opens the job's stdout as
    // the user, and the trials write their results there.
    for (const std::string& d : {e.output_dir, e.output_dir + "/logs", e.output_dir + "/attempts", e.output_dir + "/inference-done"}) {
        if (mkdir(d.c_str(), 0750) == 0 || errno == EEXIST) {
            struct stat st {};
            if (lstat(d.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid != e.uid)
                if (chown(d.c_str(), e.uid, e.gid) != 0) log_line("cannot chown {} to uid {}: {}", d, e.uid, strerror(errno));
        }
    }
}

bool Scheduler::submit(const TrialRow& t, const EvalInfo& e, const std::string& node, double time_limit_s) {
    ensure_dirs(e);
    const AttemptRow a = begin_attempt(db_, t, node, time_limit_s, now_s());
    TrialScript ts;
    ts.stage_helper = config_.stage_helper;
    ts.stage_dir = config_.stage_dir;
    ts.stage_cache_bytes = config_.stage_cache_bytes;
    ts.checkpoint_path = e.path;
    ts.attempt_dir = attempt_dir(e, a.tag);
    for (const auto& d : t.parts()) ts.result_files.push_back(part_dir(e, t, d) + "/result.json");
    ts.done_marker = done_marker(e, t.id);
    ts.command = t.command;
    slurm::BatchJob job;
    job.name = a.tag;
    job.comment = "evalsched trial " + t.trial_key;
    job.script = trial_script(ts);
    std::string home = "/";
    if (passwd* pw = getpwuid(e.uid); pw && pw->pw_dir) home = pw->pw_dir;
    job.environment = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "USER=" + e.user, "LOGNAME=" + e.user,
                       fmt::format("EVALSCHED_EVALUATION={}", e.id), "EVALSCHED_TRIAL=" + t.trial_key,
                       "EVALSCHED_OUTPUT=" + e.output_dir};
    job.user_id = e.uid;
    job.group_id = e.gid;
    job.time_limit_min = static_cast<std::uint32_t>(std::ceil(time_limit_s / 60));
    job.gpus_per_node = t.gpus;
    job.required_node = node;
    job.excluded_nodes = t.excluded_nodes;
    job.partition = config_.partition;
    job.work_dir = e.output_dir;
    job.std_out = log_path(e, a.tag);
    std::string error;
    auto id = slurm::submit_batch(job, error);
    if (!id) {
        log_line("trial {}: slurmctld refused it on {}: {}", t.trial_key, node, error);
        attempt_never_submitted(db_, a, error);
        return false;
    }
    attempt_submitted(db_, a, *id);
    log_line("trial {} attempt {}: job {} on {} with --time {}", t.trial_key, a.number, *id, node, job.time_limit_min);
    return true;
}

void Scheduler::plan_and_submit(const std::vector<slurm::JobView>& jobs, const std::vector<slurm::NodeGpus>& nodes) {
    const auto evals = active_evaluations(db_);
    if (evals.empty()) return;
    std::map<std::int64_t, EvalInfo> by_id;
    for (const auto& e : evals) by_id[e.id] = e;
    auto pending = trials_in_state(db_, {"pending"});
    std::erase_if(pending, [&](const TrialRow& t) { return !by_id.count(t.evaluation); });
    if (pending.empty()) return;

    const double now = now_s();
    std::map<std::string, NodeWindow> windows;
    for (const auto& n : nodes) {
        NodeWindow w;
        w.node = n.name;
        w.total_gpus = n.total_gpus;
        w.free_gpus = std::max(0, n.total_gpus - n.used_gpus);
        w.usable = n.usable && n.total_gpus > 0;
        w.window_s = config_.bf_window_s;
        windows[n.name] = w;
    }
    // Backfill: a pending job's planned start on a node closes that node's window then.
    for (const auto& j : jobs) {
        if (!j.pending() || j.start_time <= 0 || j.sched_nodes.empty() || j.name.starts_with("evalsched-")) continue;
        for (const auto& host : slurm::expand_hostlist(j.sched_nodes))
            if (auto it = windows.find(host); it != windows.end())
                it->second.window_s = std::min(it->second.window_s, std::max(0.0, static_cast<double>(j.start_time) - now));
    }
    // Our own jobs submitted but not started yet hold GPUs slurmctld does not count as used.
    for (const auto& a : open_attempts(db_)) {
        if (a.state == "running" || a.node.empty()) continue;
        auto t = load_trial(db_, a.trial);
        if (auto it = windows.find(a.node); t && it != windows.end()) it->second.free_gpus = std::max(0, it->second.free_gpus - t->gpus);
    }
    std::map<std::int64_t, std::string> key_of;
    for (const auto& [id, e] : by_id) key_of[id] = e.key();
    for (const auto& [eval, node] : staged_nodes(db_))
        if (auto it = windows.find(node); it != windows.end() && key_of.count(eval)) it->second.staged.push_back(key_of[eval]);

    std::map<std::string, const TrialRow*> trial_of;
    auto pending_of = [&](const TrialRow& t) {
        const EvalInfo& e = by_id[t.evaluation];
        PendingTrial p;
        p.id = std::to_string(t.id);
        p.checkpoint = e.key();
        p.gpus = t.gpus;
        p.median_s = t.median_s;
        p.p90_s = t.p90_s;
        p.startup_s = t.startup_s;
        p.metric_s = t.metric_s;
        p.stage_s = priors_.stage_seconds("", e.checkpoint_bytes);
        // Priority first, then first come: a rank the planner sorts ascending.
        p.checkpoint_rank = e.submitted_at - e.priority * 1e9;
        p.conservative = t.conservative;
        trial_of[p.id] = &t;
        return p;
    };
    PlanOptions options;
    options.margin_fraction = config_.margin_fraction;
    options.margin_s = config_.margin_s;
    std::vector<PendingTrial> trials;
    std::map<std::string, std::string> avoid;
    for (const auto& t : pending) {
        trials.push_back(pending_of(t));
        if (!t.excluded_nodes.empty()) avoid[trials.back().id] = t.excluded_nodes;
    }
    std::vector<NodeWindow> all;
    for (const auto& [name, w] : windows) all.push_back(w);
    for (const auto& p : plan_round(trials, avoid, std::move(all), options).submit) {
        const TrialRow& t = *trial_of[p.trial];
        submit(t, by_id[t.evaluation], p.node, p.time_limit_s);
    }
}

void Scheduler::reconcile_metrics(const TagIndex& by_tag) {
    for (MetricRow m : metrics_in_state(db_, {"submitting", "queued", "running"})) {
        auto e = load_evaluation(db_, m.evaluation);
        if (!e) continue;
        const slurm::JobView* job = find_tag(by_tag, m.tag);
        if (m.state == "submitting") {
            // As with trials: the tag says whether slurmctld took it before the daemon died.
            if (!job) {
                log_line("metric job of {} in evaluation {}: no job tagged {} after a restart; submitting it again", m.dataset, m.evaluation, m.tag);
                metric_never_submitted(db_, m, "");
                continue;
            }
            metric_submitted(db_, m, job->job_id, m.after_jobs);
            log_line("metric job of {} in evaluation {}: adopted job {} found by its tag after a restart", m.dataset, m.evaluation, job->job_id);
            m.state = "queued";
            m.job_id = job->job_id;
        }
        if (job && job->job_id != m.job_id.value_or(0)) continue;  // not ours
        if (job && job->active()) {
            if (!job->pending() && m.state != "running") metric_running(db_, m, job->nodes);
            continue;
        }
        const MetricOutcome o = judge_metric(m, *e, job);
        finish_metric(db_, m, o, now_s());
        switch (o.kind) {
        case MetricOutcome::Kind::done:
            log_line("metric job of {} in evaluation {} done on {} ({} scores)", m.dataset, m.evaluation, o.node, o.scores.size());
            break;
        case MetricOutcome::Kind::not_ready:
            log_line("metric job of {} in evaluation {}: {}; waiting for the retry", m.dataset, m.evaluation, o.reason);
            break;
        case MetricOutcome::Kind::failed:
            log_line("metric job of {} in evaluation {} failed on {}: {} ({}){}", m.dataset, m.evaluation, o.node, o.reason, o.category,
                     o.retry ? ", retrying" : ", not retried");
            break;
        }
    }
}

MetricOutcome Scheduler::judge_metric(const MetricRow& m, const EvalInfo& e, const slurm::JobView* job) {
    MetricOutcome o;
    o.node = job ? job->nodes : "";
    const RunRecord run = read_run(attempt_dir(e, m.tag), e);
    // The script's own exit status: Slurm's, or (the job was purged) the one run.json kept.
    const int exit_code = job ? static_cast<int>(job->exit_code >> 8) : run.exit_code.value_or(-1);
    const bool ok = job ? job->succeeded() : exit_code == 0;
    if (ok) {
        const std::string result = fmt::format("{}/{}/result.json", e.output_dir, m.dataset);
        if (auto r = read_json(result, e)) {
            o.scores = scores_of(*r, m.dataset);
            o.kind = MetricOutcome::Kind::done;
            return o;
        }
        o.category = "script";
        o.reason = "metric job wrote no result.json";
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
        const auto [category, reason] = diagnose_failure(log_path(e, m.tag), e, job);
        o.category = category;
        o.reason = reason;
    }
    o.retry = retries(o.category, m.failures + 1, config_.max_attempts);
    return o;
}

void Scheduler::submit_metrics() {
    const auto evals = active_evaluations(db_);
    std::map<std::int64_t, const EvalInfo*> by_id;
    for (const auto& e : evals) by_id[e.id] = &e;
    for (const MetricRow& m : metrics_in_state(db_, {"waiting"})) {
        auto it = by_id.find(m.evaluation);
        if (it == by_id.end()) continue;
        const EvalInfo& e = *it->second;
        const MetricDecision d = decide_metric(metric_trial_progress(db_, m));
        if (d.kind == MetricDecision::Kind::wait) continue;
        if (d.kind == MetricDecision::Kind::give_up) {
            metric_given_up(db_, m, d.state, d.reason, now_s());
            log_line("metric job of {} in evaluation {} will not run: {}", m.dataset, m.evaluation, d.reason);
            continue;
        }
        submit_metric(m, e, d.after);
    }
}

bool Scheduler::submit_metric(const MetricRow& waiting, const EvalInfo& e, const std::vector<std::int64_t>& after) {
    ensure_dirs(e);
    const MetricRow m = begin_metric(db_, waiting, now_s());
    MetricScript ms;
    ms.attempt_dir = attempt_dir(e, m.tag);
    ms.output_dir = fmt::format("{}/{}", e.output_dir, m.dataset);
    for (const auto& id : m.trials)
        if (auto t = load_trial(db_, id)) ms.done_markers.emplace_back(done_marker(e, id), t->trial_key);
    ms.command = m.command;
    slurm::BatchJob job;
    job.name = m.tag;
    job.comment = fmt::format("evalsched metric {}/{}/{}", e.name, e.checkpoint, m.dataset);
    job.script = metric_script(ms);
    std::string home = "/";
    if (passwd* pw = getpwuid(e.uid); pw && pw->pw_dir) home = pw->pw_dir;
    job.environment = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "USER=" + e.user, "LOGNAME=" + e.user,
                       fmt::format("EVALSCHED_EVALUATION={}", e.id), "EVALSCHED_DATASET=" + m.dataset, "EVALSCHED_OUTPUT=" + e.output_dir};
    job.user_id = e.uid;
    job.group_id = e.gid;
    // CPU only: no GPUs asked for, so inference's GPUs are free the moment it ends.
    job.time_limit_min = static_cast<std::uint32_t>(std::ceil(metric_time_limit_s(m.estimate_s) / 60));
    job.partition = config_.partition;
    std::string after_jobs;
    for (const auto id : after) after_jobs += fmt::format("{}{}", after_jobs.empty() ? "" : ":", id);
    if (!after_jobs.empty()) job.dependency = "afterany:" + after_jobs;
    job.work_dir = e.output_dir;
    job.std_out = log_path(e, m.tag);
    std::string error;
    auto id = slurm::submit_batch(job, error);
    if (!id) {
        log_line("metric job of {} in evaluation {} refused: {}", m.dataset, e.id, error);
        metric_never_submitted(db_, m, "slurmctld refused the metric job: " + error);
        return false;
    }
    metric_submitted(db_, m, *id, after_jobs);
    log_line("metric job of {} in evaluation {}: job {}{}", m.dataset, e.id, *id,
             after_jobs.empty() ? "" : " after " + after_jobs);
    return true;
}

}  // namespace acme::evalsched
