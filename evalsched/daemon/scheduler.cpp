#include "evalsched/daemon/scheduler.hpp"

#include <algorithm>
#include <map>

#include "common/store/evalsched_store.hpp"
#include "evalsched/core/decisions.hpp"
#include "evalsched/core/planner.hpp"
#include "evalsched/daemon/attempts.hpp"
#include "evalsched/daemon/evaluations.hpp"
#include "evalsched/daemon/job_files.hpp"
#include "evalsched/daemon/lifecycle.hpp"
#include "evalsched/daemon/log.hpp"
#include "evalsched/daemon/metric_jobs.hpp"

namespace acme::evalsched {

Scheduler::Scheduler(const DaemonConfig& config, store::Database db, std::optional<diagnose::Engine> engine,
                     std::atomic<int>* cluster_gpus)
    : config_(config),
      db_(std::move(db)),
      engine_(std::move(engine)),
      cluster_gpus_(cluster_gpus),
      trials_(config_, db_, engine_ ? &*engine_ : nullptr),
      metrics_(config_, db_, engine_ ? &*engine_ : nullptr) {}

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
        reconcile(trials_, by_tag);
        reconcile(metrics_, by_tag);
        kill_cancelled(trials_, by_tag);
        kill_cancelled(metrics_, by_tag);
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

void Scheduler::plan_and_submit(const std::vector<slurm::JobView>& jobs, const std::vector<slurm::NodeGpus>& nodes) {
    const auto evals = active_evaluations(db_);
    if (evals.empty()) return;
    std::map<std::int64_t, EvalInfo> by_id;
    for (const auto& e : evals) by_id[e.id] = e;
    auto pending = trials_in_state(db_, {"pending"});
    std::erase_if(pending, [&](const TrialRow& t) { return !by_id.count(t.evaluation); });
    if (pending.empty()) return;

    const double now = wall_clock_s();
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
        trials_.start(t, by_id[t.evaluation], p.node, p.time_limit_s);
    }
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
