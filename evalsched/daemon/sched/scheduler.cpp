#include "evalsched/daemon/sched/scheduler.hpp"

#include <algorithm>
#include <ctime>
#include <map>
#include <set>

#include "evalsched/store/priors.hpp"
#include <limits>

#include <fmt/format.h>

#include "evalsched/core/decisions.hpp"
#include "evalsched/core/forecast.hpp"
#include "evalsched/core/planner.hpp"
#include "evalsched/daemon/evaluations.hpp"
#include "evalsched/daemon/log.hpp"
#include "evalsched/daemon/metric_jobs.hpp"
#include "evalsched/daemon/sched/job_files.hpp"
#include "evalsched/daemon/sched/lifecycle.hpp"
#include "evalsched/store/attempts.hpp"
#include "evalsched/store/stage_jobs.hpp"

namespace acme::evalsched {

Scheduler::Scheduler(const DaemonConfig& config, store::Database db, std::optional<diagnose::Engine> engine,
                     std::atomic<int>* cluster_gpus, SchedulerStatus* status, std::function<void()> wake)
    : config_(config),
      db_(std::move(db)),
      engine_(std::move(engine)),
      cluster_gpus_(cluster_gpus),
      status_(status),
      trials_(config_, db_, engine_ ? &*engine_ : nullptr),
      metrics_(config_, db_, engine_ ? &*engine_ : nullptr),
      stages_(config_, db_),
      pilots_(config_, db_, trials_, std::move(wake)) {}

void Scheduler::tick() noexcept {
    try {
        // Priors are re-read each round: the finished trials of the last round refine them.
        priors_ = PriorBook();
        priors_.add_window(store::recent_priors(db_));
        std::string error;
        auto jobs = slurm::load_jobs(error);
        if (!jobs) {
            log_line("cannot ask slurmctld for jobs ({}); trying again next round", error);
            if (status_) status_->controller_failed(error, wall_clock_s());
            return;
        }
        const TagIndex by_tag = index_by_tag(*jobs);
        // Stage jobs first: a trial's dependency is judged against their newest state.
        reconcile(stages_, by_tag);
        reconcile(trials_, by_tag);
        reconcile(metrics_, by_tag);
        withdraw_orphans(by_tag);
        // Pilots' steps before the pilots: a step that ended with its trial done keeps it; one
        // that its pilot's end killed is lost, and the pilot's end loses the rest.
        pilots_.observe(by_tag);
        pilots_.judge_steps();
        reconcile(pilots_, by_tag);
        kill_cancelled(trials_, by_tag);
        kill_cancelled(metrics_, by_tag);
        kill_cancelled(stages_, by_tag);
        kill_cancelled(pilots_, by_tag);
        pilots_.release_inactive(active_evaluations(db_));
        pilots_.chase_released();
        auto nodes = slurm::load_node_gpus(error);
        if (!nodes) {
            log_line("cannot ask slurmctld for nodes ({}); trying again next round", error);
            if (status_) status_->controller_failed(error, wall_clock_s());
            return;
        }
        if (status_) status_->controller_ok();
        if (cluster_gpus_) cluster_gpus_->store(slurm::usable_gpus(*nodes));
        plan_and_submit(*jobs, *nodes);
        // After placing trials: a dataset whose last trial was just queued gets its metric job now.
        submit_metrics();
        if (status_) publish_forecast(*jobs, *nodes);
    } catch (const std::exception& ex) {
        log_line("scheduling round failed: {}", ex.what());
    } catch (...) {
        log_line("scheduling round failed");
    }
}

bool Scheduler::jobs_changed() noexcept {
    try {
        std::string error;
        auto change = slurm::load_jobs_since(jobs_since_, error);
        if (!change || !change->changed) return false;
        std::map<std::uint32_t, std::uint32_t> ours;
        for (const auto& j : change->jobs)
            // Completing too: a node's GPUs come free when the epilog is over, not at the job's end.
            if (j.name.starts_with("evalsched-") && carries_own_token(j)) ours[j.job_id] = j.state | (j.completing ? 0x10000u : 0u);
        if (ours == our_jobs_) return false;
        our_jobs_ = std::move(ours);
        return true;
    } catch (...) {
        return false;
    }
}

std::optional<std::string> Scheduler::stage_dependency(const EvalInfo& e, const std::string& node) {
    const StagePlan plan = stage_plan(newest_stage(db_, e.id, node));
    switch (plan.kind) {
    case StagePlan::Kind::none: return std::string();
    case StagePlan::Kind::wait: return fmt::format("afterok:{}", plan.job_id);
    case StagePlan::Kind::unavailable: return std::nullopt;
    case StagePlan::Kind::submit: break;
    }
    const auto id = stages_.start(e, node, plan.number, priors_.stage_seconds(node, e.checkpoint_bytes));
    if (id) return fmt::format("afterok:{}", *id);
    // Refused: recorded as a failed try, so the node is not blocked by a refusal that repeats.
    return std::nullopt;
}

void Scheduler::withdraw_orphans(const TagIndex& by_tag) {
    for (const AttemptRow& a : open_attempts(db_)) {
        if (a.state != "queued") continue;
        const auto t = load_trial(db_, a.trial);
        const auto e = t ? load_evaluation(db_, t->evaluation) : std::nullopt;
        if (!e) continue;
        const slurm::JobView* job = find_tag(by_tag, a.tag, e->uid);
        if (!job || !job->dependency_never || job->job_id != a.job_id.value_or(0)) continue;
        std::string error;
        if (!slurm::cancel_job(job->job_id, error)) {
            log_line("cannot cancel job {} of trial {} (its stage job failed): {}; trying again next round", job->job_id, t->trial_key, error);
            continue;
        }
        attempt_withdrawn(db_, a, "its stage job failed; placed again");
        log_line("trial {} attempt {}: job {} waited on a stage job that failed; cancelled, placed again next round", t->trial_key,
                 a.number, job->job_id);
    }
}

void Scheduler::note_refill(int trials) {
    auto& freed = trials_.freed_at();
    const double now = wall_clock_s();
    for (; trials > 0 && !freed.empty(); --trials) {
        const double idle = std::max(0.0, now - freed.front());
        freed.erase(freed.begin());
        if (status_) status_->observe_refill(idle);
        log_line("a freed GPU got its next trial {:.3f} s after the job before it ended", idle);
    }
}

void Scheduler::plan_and_submit(const std::vector<slurm::JobView>& jobs, const std::vector<slurm::NodeGpus>& nodes) {
    const auto evals = active_evaluations(db_);
    // A GPU freed while nothing waits is not a GPU left idle by the scheduler.
    if (evals.empty()) {
        trials_.freed_at().clear();
        return;
    }
    std::map<std::int64_t, EvalInfo> by_id;
    for (const auto& e : evals) by_id[e.id] = e;
    last_holds_.clear();
    auto pending = trials_in_state(db_, {"pending"});
    std::erase_if(pending, [&](const TrialRow& t) { return !by_id.count(t.evaluation); });
    PlanOptions options;
    options.margin_fraction = config_.margin_fraction;
    options.margin_s = config_.margin_s;
    // Running pilots take their next trial first, in either mode (after a switch to trials,
    // a pilot still running finishes the work that fits it), and idle ones are released.
    pilots_.feed(pending, evals, options, [&](const TrialRow& t, const EvalInfo& e) { return to_pending(t, e); });
    if (pending.empty()) {
        trials_.freed_at().clear();
        return;
    }
    if (config_.pilots) {
        submit_pilots(pending, by_id, options, jobs, nodes);
        return;
    }
    // A served evaluation's trials are client commands (pilot_serve.hpp): after a switch to
    // mode = trials they still run in pilots, never as jobs of their own without a server.
    {
        std::vector<TrialRow> served;
        std::erase_if(pending, [&](const TrialRow& t) {
            if (!pilots_.served(t.evaluation)) return false;
            served.push_back(t);
            return true;
        });
        if (!served.empty()) submit_pilots(served, by_id, options, jobs, nodes);
        if (pending.empty()) return;
    }

    std::map<std::string, NodeWindow> windows = windows_of(jobs, nodes, config_.bf_window_s);
    // A precursor stages the checkpoint before a trial starts: no trial's --time pays for the
    // copy, except where the precursor gave up and trials stage themselves.
    {
        std::set<std::pair<std::int64_t, std::string>> given_up;
        for (const auto& g : stage_given_up(db_)) given_up.insert(g);
        for (auto& [name, w] : windows)
            for (const auto& e : evals)
                if (!given_up.count({e.id, name})) w.staged.push_back(e.key());
    }
    std::map<std::string, const TrialRow*> trial_of;
    auto pending_of = [&](const TrialRow& t) {
        PendingTrial p = to_pending(t, by_id[t.evaluation]);
        trial_of[p.id] = &t;
        return p;
    };
    std::vector<PendingTrial> trials;
    std::map<std::string, std::string> avoid;
    for (const auto& t : pending) {
        trials.push_back(pending_of(t));
        if (!t.excluded_nodes.empty()) avoid[trials.back().id] = t.excluded_nodes;
    }
    std::vector<NodeWindow> all;
    for (const auto& [name, w] : windows) all.push_back(w);
    const Plan round = plan_round(trials, avoid, std::move(all), options);
    for (const auto& h : round.hold) last_holds_[h.trial] = h.reason;
    int started = 0;
    for (const auto& p : round.submit) {
        const TrialRow& t = *trial_of[p.trial];
        const EvalInfo& e = by_id[t.evaluation];
        const auto after = stage_dependency(e, p.node);
        if (!after) {
            log_line("trial {} not placed on {} this round: its checkpoint cannot be staged there now", t.trial_key, p.node);
            continue;
        }
        if (trials_.start(t, e, p.node, p.time_limit_s, *after)) ++started;
    }
    note_refill(started);
}

void Scheduler::submit_pilots(const std::vector<TrialRow>& pending, const std::map<std::int64_t, EvalInfo>& by_id, const PlanOptions& options,
                              const std::vector<slurm::JobView>& jobs, const std::vector<slurm::NodeGpus>& nodes) {
    std::map<std::string, NodeWindow> windows = windows_of(jobs, nodes, config_.bf_window_s);
    for (const auto& [eval, node] : staged_nodes(db_))
        if (auto it = windows.find(node); it != windows.end() && by_id.count(eval)) it->second.staged.push_back(by_id.at(eval).key());
    std::vector<PendingTrial> trials;
    for (const auto& t : pending) trials.push_back(to_pending(t, by_id.at(t.evaluation)));
    // Pilots already asked for (queued, or running: they take these trials as their steps end).
    std::map<std::string, int> serving;
    for (const PilotRow& p : pilots_.open())
        if (p.state != "releasing" && by_id.count(p.evaluation)) ++serving[pilot_key(by_id.at(p.evaluation).key(), p.gpus)];
    PilotOptions po;
    po.trial = options;
    po.max_s = config_.pilot_max_s;
    std::vector<NodeWindow> all;
    for (const auto& [name, w] : windows) all.push_back(w);
    const PilotPlan round = plan_pilots(trials, all, serving, po);
    for (const auto& h : round.hold) last_holds_[h.trial] = h.reason;
    for (const PilotRequest& r : round.submit) {
        auto e = std::find_if(by_id.begin(), by_id.end(), [&](const auto& x) { return x.second.key() == r.checkpoint; });
        if (e == by_id.end()) continue;
        // Precursor staging: the pilot's GPUs are allocated only once the node holds the copy.
        const auto after = stage_dependency(e->second, r.node);
        if (!after) {
            log_line("pilot for {} not placed on {} this round: its checkpoint cannot be staged there now", e->second.key(), r.node);
            continue;
        }
        pilots_.start(e->second, r, *after);
    }
}

PendingTrial Scheduler::to_pending(const TrialRow& t, const EvalInfo& e) const {
    PendingTrial p;
    p.id = std::to_string(t.id);
    p.checkpoint = e.key();
    p.gpus = t.gpus;
    p.median_s = t.median_s;
    p.p90_s = t.p90_s;
    // The startup learned so far, not the one known at submission: the first evaluation's
    // trials were made with the cost model's guess, and its first finished trials correct it
    // for the rest (a --time 20 s too long keeps a trial out of a window it fits).
    p.startup_s = priors_.startup_seconds(ModelSpec{e.params_b, e.checkpoint_bytes}, t.gpus);
    p.metric_s = t.metric_s;
    p.stage_s = priors_.stage_seconds("", e.checkpoint_bytes);
    // Priority first, then first come: a rank the planner sorts ascending.
    p.checkpoint_rank = e.submitted_at - e.priority * 1e9;
    p.conservative = t.conservative;
    return p;
}

std::map<std::string, NodeWindow> Scheduler::windows_of(const std::vector<slurm::JobView>& jobs, const std::vector<slurm::NodeGpus>& nodes,
                                                        double cap) {
    const double now = wall_clock_s();
    std::map<std::string, NodeWindow> windows;
    for (const auto& n : nodes) {
        NodeWindow w;
        w.node = n.name;
        w.total_gpus = n.total_gpus;
        w.free_gpus = std::max(0, n.total_gpus - n.used_gpus);
        w.usable = n.usable && n.total_gpus > 0;
        w.window_s = cap;
        windows[n.name] = w;
    }
    // Backfill: a pending job's planned start on a node closes that node's window then.
    for (const auto& j : jobs) {
        if (!j.pending() || j.start_time <= 0 || j.sched_nodes.empty() || (j.name.starts_with("evalsched-") && carries_own_token(j))) continue;
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
    // So do pilots not running yet.
    for (const PilotRow& p : open_pilots(db_))
        if (p.state == "submitting" || p.state == "queued")
            if (auto it = windows.find(p.node); it != windows.end()) it->second.free_gpus = std::max(0, it->second.free_gpus - p.gpus);
    return windows;
}

void Scheduler::publish_forecast(const std::vector<slurm::JobView>& jobs, const std::vector<slurm::NodeGpus>& nodes) {
    const double now = wall_clock_s();
    const auto evals = active_evaluations(db_);
    std::map<std::int64_t, const EvalInfo*> by_id;
    for (const auto& e : evals) by_id[e.id] = &e;
    // Windows without the planner's horizon: a node no pending job is planned onto stays open.
    auto windows = windows_of(jobs, nodes, std::numeric_limits<double>::infinity());
    std::map<std::int64_t, std::string> key_of;
    for (const auto& [id, e] : by_id) key_of[id] = e->key();
    for (const auto& [eval, node] : staged_nodes(db_))
        if (auto it = windows.find(node); it != windows.end() && key_of.count(eval)) it->second.staged.push_back(key_of[eval]);
    std::map<std::int64_t, AttemptRow> open_of;
    for (const auto& a : open_attempts(db_)) open_of[a.trial] = a;
    for (const auto& a : open_steps(db_)) open_of[a.trial] = a;
    const TagIndex by_tag = index_by_tag(jobs);

    std::vector<PendingTrial> pending;
    std::vector<HeldTrial> held;
    std::map<std::int64_t, int> holding;  // evaluation -> trials that hold GPUs
    std::map<std::int64_t, std::string> first_hold;
    for (const TrialRow& t : trials_in_state(db_, {"pending", "submitting", "queued", "running"})) {
        auto e = by_id.find(t.evaluation);
        if (e == by_id.end()) continue;
        auto a = open_of.find(t.id);
        if (t.state == "pending" || a == open_of.end()) {
            pending.push_back(to_pending(t, *e->second));
            if (auto h = last_holds_.find(pending.back().id); h != last_holds_.end() && !first_hold.count(t.evaluation))
                first_hold[t.evaluation] = h->second;
            continue;
        }
        HeldTrial h;
        h.id = std::to_string(t.id);
        h.checkpoint = e->second->key();
        h.node = a->second.node;
        h.gpus = t.gpus;
        h.metric_s = t.metric_s;
        h.remaining_s = t.startup_s + t.median_s;
        if (const slurm::JobView* j = find_tag(by_tag, a->second.tag, e->second->uid); j && !j->pending() && j->start_time > 0)
            h.remaining_s -= now - static_cast<double>(j->start_time);
        held.push_back(h);
        ++holding[t.evaluation];
    }
    // Scoring left once inference is over: the metric jobs' estimates.
    std::map<std::int64_t, double> scoring_s;
    for (const MetricRow& m : metrics_in_state(db_, {"waiting", "submitting", "queued", "running"})) {
        double left = m.estimate_s;
        if (m.state == "running") {
            const slurm::JobView* j = find_tag(by_tag, m.tag, by_id.count(m.evaluation) ? std::optional(by_id[m.evaluation]->uid) : std::nullopt);
            if (j && j->start_time > 0) left -= now - static_cast<double>(j->start_time);
        }
        scoring_s[m.evaluation] = std::max(scoring_s[m.evaluation], std::max(0.0, left));
    }
    const Forecast fc = forecast(pending, held, [&] {
        std::vector<NodeWindow> all;
        for (const auto& [name, w] : windows) all.push_back(w);
        return all;
    }());
    std::map<std::int64_t, EvalForecast> out;
    for (const auto& [id, e] : by_id) {
        EvalForecast f;
        auto c = fc.by_checkpoint.find(e->key());
        if (c == fc.by_checkpoint.end()) {
            f.finish_at = now + scoring_s[id];
            f.basis = "the metric jobs' estimates";
        } else {
            const CheckpointForecast& cf = c->second;
            if (cf.finish_s) f.finish_at = now + std::max(*cf.finish_s, scoring_s[id]);
            f.waiting_reason = cf.waiting_reason;
            f.basis = fmt::format("plan of {} trial{} left on {} GPU{} free or held by evalsched, median run times{}", cf.trials_left,
                                  cf.trials_left == 1 ? "" : "s", fc.gpus_seen, fc.gpus_seen == 1 ? "" : "s",
                                  cf.guessed ? fmt::format(" ({} guessed)", cf.guessed) : "");
        }
        if (!holding.count(id) && first_hold.count(id)) f.held = first_hold[id];
        out[id] = std::move(f);
    }
    status_->publish(out, now);
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
            metric_given_up(db_, m, d.state, d.reason, wall_clock_s());
            log_line("metric job of {} in evaluation {} will not run: {}", m.dataset, m.evaluation, d.reason);
            continue;
        }
        metrics_.start(m, e, d.after);
    }
}

}  // namespace acme::evalsched
