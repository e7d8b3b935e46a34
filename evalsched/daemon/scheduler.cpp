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

std::string attempt_dir(const EvalInfo& e, const AttemptRow& a) { return fmt::format("{}/attempts/{}", e.output_dir, a.tag); }
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

bool contains_node(const std::string& list, const std::string& node) {
    return (',' + list + ',').find(',' + node + ',') != std::string::npos;
}

}  // namespace

Scheduler::Scheduler(const DaemonConfig& config, store::Database db, std::optional<diagnose::Engine> engine)
    : config_(config), db_(std::move(db)), engine_(std::move(engine)) {}

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
        reconcile(*jobs);
        cancel_jobs();
        plan_and_submit(*jobs);
    } catch (const std::exception& ex) {
        log_line("scheduling round failed: {}", ex.what());
    } catch (...) {
        log_line("scheduling round failed");
    }
}

void Scheduler::reconcile(const std::vector<slurm::JobView>& jobs) {
    // The newest job of a tag wins: after a requeue Slurm keeps the id, so there is one.
    std::map<std::string, const slurm::JobView*> by_tag;
    for (const auto& j : jobs)
        if (j.name.starts_with("evalsched-")) {
            auto& slot = by_tag[j.name];
            if (!slot || slot->job_id < j.job_id) slot = &j;
        }
    auto find = [&](const std::string& tag) -> const slurm::JobView* {
        auto it = by_tag.find(tag);
        return it == by_tag.end() ? nullptr : it->second;
    };
    for (AttemptRow a : open_attempts(db_)) {
        auto t = load_trial(db_, a.trial);
        if (!t) continue;
        auto e = load_evaluation(db_, t->evaluation);
        if (!e) continue;
        const slurm::JobView* job = find(a.tag);
        const slurm::JobView* metric = find(a.tag + "-metric");
        if (a.state == "submitting") {
            // The daemon died between marking the attempt and recording its job: the tag says
            // whether slurmctld took it. Never submit the same attempt twice.
            if (!job) {
                log_line("trial {} attempt {}: no job tagged {} after a restart; submitting it again", t->trial_key, a.number, a.tag);
                attempt_never_submitted(db_, a, "");
                continue;
            }
            std::optional<std::int64_t> metric_id;
            if (metric) metric_id = metric->job_id;
            else if (!t->metric_command.empty()) metric_id = submit_metric(*t, *e, a, job->job_id);
            attempt_submitted(db_, a, job->job_id, metric_id);
            log_line("trial {} attempt {}: adopted job {} found by its tag after a restart", t->trial_key, a.number, job->job_id);
            a.state = "queued";
            a.job_id = job->job_id;
            a.metric_job = metric_id;
        }
        if (job && job->job_id != a.job_id.value_or(0)) continue;  // not ours (a reused name)
        if (job && job->active()) {
            if (!job->pending() && a.state != "running") attempt_running(db_, a, job->nodes);
            continue;
        }
        // Inference ended; with a metric job the trial ends when that one does.
        if (a.metric_job && metric && metric->active()) continue;
        const Outcome o = judge(a, *t, *e, job, metric);
        finish_attempt(db_, a, o, size_class(e->params_b), now_s());
        if (o.success) log_line("trial {} done on {} ({} scores)", t->trial_key, o.node, o.scores.size());
        else if (o.cancelled) log_line("trial {} cancelled", t->trial_key);
        else log_line("trial {} attempt {} failed on {}: {} ({}){}", t->trial_key, a.number, o.node, o.reason, o.category,
                      o.retry ? fmt::format(", retrying{}", o.exclude_node.empty() ? "" : " without " + o.exclude_node) : ", not retried");
    }
}

Outcome Scheduler::judge(const AttemptRow& a, const TrialRow& t, const EvalInfo& e, const slurm::JobView* job,
                         const slurm::JobView* metric) {
    Outcome o;
    o.node = job && !job->nodes.empty() ? job->nodes : a.node;
    const std::string dir = attempt_dir(e, a);
    if (auto s = read_json(dir + "/stage.json", e)) {
        o.stage = Outcome::Stage{s->value("copied", 0) != 0, s->value("bytes", 0.0), s->value("seconds", 0.0)};
    }
    auto run = read_json(dir + "/run.json", e);
    if (run) {
        o.exit_code = run->value("exit_code", -1);
        o.run_s = run->value("end", 0.0) - run->value("start", 0.0);
    }
    if (t.state == "cancelled") {
        o.cancelled = true;
        return o;
    }
    // Inference succeeded: Slurm says so, or (the job was purged) the wrapper recorded exit 0.
    const bool inference_ok = job ? job->succeeded() : (o.exit_code && *o.exit_code == 0);
    if (inference_ok) {
        bool all = true;
        for (const auto& d : t.parts()) {
            auto r = read_json(part_dir(e, t, d) + "/result.json", e);
            if (!r) {
                all = false;
                break;
            }
            const json& scores = r->contains("scores") ? (*r)["scores"] : *r;
            if (!scores.is_object()) continue;
            for (auto it = scores.begin(); it != scores.end(); ++it)
                if (it->is_number()) o.scores.push_back({d, it.key(), it->get<double>()});
            if (r->contains("inference_s") && (*r)["inference_s"].is_number() && t.parts().size() == 1) o.run_s = (*r)["inference_s"].get<double>();
        }
        if (all) {
            o.success = true;
            return o;
        }
        // The output check: a run that wrote no result is the evaluation's bug, not the node's.
        o.category = "script";
        o.reason = metric ? "metric job wrote no result.json" : "no result.json written";
        o.retry = false;
        return o;
    }
    // Failed: ask the diagnosis engine whether the node or the evaluation is to blame.
    const std::string tail = read_as_user(log_path(e, a.tag), e.uid, e.gid, 256 * 1024).value_or("");
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
    o.category = category;
    o.reason = reason;
    // Infrastructure: elsewhere, without that node. Unknown: once more, the benefit of the
    // doubt. Framework and script failures repeat anywhere: report them, never loop.
    o.retry = (category == "infrastructure" || category == "unknown") && t.attempts < config_.max_attempts;
    if (category == "infrastructure") o.exclude_node = o.node;
    return o;
}

void Scheduler::cancel_jobs() {
    for (const auto& a : attempts_to_cancel(db_)) {
        std::string error;
        bool ok = true;
        if (a.job_id) ok = slurm::cancel_job(static_cast<std::uint32_t>(*a.job_id), error) && ok;
        if (a.metric_job) ok = slurm::cancel_job(static_cast<std::uint32_t>(*a.metric_job), error) && ok;
        if (!ok) {
            log_line("cannot cancel the job of {}: {}; trying again next round", a.tag, error);
            continue;
        }
        attempt_cancelled(db_, a, now_s());
    }
}

void Scheduler::ensure_dirs(const EvalInfo& e) {
    // Created by the daemon (root), then handed to the user: Slurm opens the job's stdout as
    // the user, and the trials write their results there.
    for (const std::string& d : {e.output_dir, e.output_dir + "/logs", e.output_dir + "/attempts"}) {
        if (mkdir(d.c_str(), 0750) == 0 || errno == EEXIST) {
            struct stat st {};
            if (lstat(d.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid != e.uid)
                if (chown(d.c_str(), e.uid, e.gid) != 0) log_line("cannot chown {} to uid {}: {}", d, e.uid, strerror(errno));
        }
    }
}

std::optional<std::int64_t> Scheduler::submit_metric(const TrialRow& t, const EvalInfo& e, const AttemptRow& a, std::uint32_t after) {
    slurm::BatchJob m;
    m.name = a.tag + "-metric";
    m.comment = "evalsched metric " + t.trial_key;
    m.script = metric_script(part_dir(e, t, t.parts().front()), t.metric_command);
    m.user_id = e.uid;
    m.group_id = e.gid;
    m.time_limit_min = static_cast<std::uint32_t>(std::ceil(std::max(2 * t.metric_s + 120, 300.0) / 60));
    m.partition = config_.partition;
    m.dependency = fmt::format("afterany:{}", after);
    m.work_dir = e.output_dir;
    m.std_out = log_path(e, m.name);
    std::string error;
    auto id = slurm::submit_batch(m, error);
    if (!id) {
        log_line("trial {}: metric job refused: {}", t.trial_key, error);
        return std::nullopt;
    }
    return *id;
}

bool Scheduler::submit(const TrialRow& t, const EvalInfo& e, const std::string& node, double time_limit_s) {
    ensure_dirs(e);
    const AttemptRow a = begin_attempt(db_, t, node, time_limit_s, now_s());
    TrialScript ts;
    ts.stage_helper = config_.stage_helper;
    ts.stage_dir = config_.stage_dir;
    ts.stage_cache_bytes = config_.stage_cache_bytes;
    ts.checkpoint_path = e.path;
    ts.attempt_dir = attempt_dir(e, a);
    for (const auto& d : t.parts()) ts.result_files.push_back(part_dir(e, t, d) + "/result.json");
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
    std::optional<std::int64_t> metric;
    if (!t.metric_command.empty()) metric = submit_metric(t, e, a, *id);
    attempt_submitted(db_, a, *id, metric);
    log_line("trial {} attempt {}: job {} on {} with --time {}", t.trial_key, a.number, *id, node, job.time_limit_min);
    return true;
}

void Scheduler::plan_and_submit(const std::vector<slurm::JobView>& jobs) {
    const auto evals = active_evaluations(db_);
    if (evals.empty()) return;
    std::map<std::int64_t, EvalInfo> by_id;
    for (const auto& e : evals) by_id[e.id] = e;
    auto pending = trials_in_state(db_, {"pending"});
    std::erase_if(pending, [&](const TrialRow& t) { return !by_id.count(t.evaluation); });
    if (pending.empty()) return;

    std::string error;
    auto nodes = slurm::load_node_gpus(error);
    if (!nodes) {
        log_line("cannot ask slurmctld for nodes ({}); trying again next round", error);
        return;
    }
    const double now = now_s();
    std::map<std::string, NodeWindow> windows;
    for (const auto& n : *nodes) {
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
    auto place = [&](const Placement& p) {
        const TrialRow& t = *trial_of[p.trial];
        if (submit(t, by_id[t.evaluation], p.node, p.time_limit_s)) {
            auto& w = windows[p.node];
            w.free_gpus = std::max(0, w.free_gpus - p.gpus);
            w.staged.push_back(by_id[t.evaluation].key());
        }
    };
    // Retries that must avoid a node are planned first, each on the nodes it may use, so the
    // staged-node preference can never pin a retry to the node that failed it.
    std::vector<PendingTrial> free_to_place;
    for (const auto& t : pending) {
        if (t.excluded_nodes.empty()) {
            free_to_place.push_back(pending_of(t));
            continue;
        }
        std::vector<NodeWindow> allowed;
        for (const auto& [name, w] : windows)
            if (!contains_node(t.excluded_nodes, name)) allowed.push_back(w);
        const PendingTrial one = pending_of(t);
        const Plan p = plan(std::span(&one, 1), allowed, options);
        for (const auto& placement : p.submit) place(placement);
    }
    std::vector<NodeWindow> all;
    for (const auto& [name, w] : windows) all.push_back(w);
    const Plan p = plan(free_to_place, all, options);
    for (const auto& placement : p.submit) place(placement);
}

}  // namespace acme::evalsched
