#include "evalsched/daemon/pilot_kind.hpp"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdlib>

#include <fmt/format.h>

#include "evalsched/daemon/attempts.hpp"
#include "evalsched/daemon/evaluations.hpp"
#include "evalsched/daemon/job_files.hpp"
#include "evalsched/daemon/job_script.hpp"
#include "evalsched/daemon/log.hpp"

namespace acme::evalsched {

static_assert(JobKind<PilotKind>);

namespace {
std::string how_it_ended(const slurm::JobView* job) {
    if (!job) return "gone from slurmctld";
    if (job->timeout) return "timed out";
    if (job->node_fail) return "node failure";
    if (job->cancelled) return "cancelled";
    if (job->succeeded()) return "completed";
    return fmt::format("failed (exit {})", job->exit_code >> 8);
}
}  // namespace

const slurm::JobView* PilotKind::job_of(const PilotRow& p) { return by_tag_ ? find_tag(*by_tag_, p.tag, owner(p)) : nullptr; }

bool PilotKind::alive(const PilotRow& p) {
    const slurm::JobView* j = job_of(p);
    return j && j->job_id == p.job_id.value_or(0) && j->active() && !j->pending();
}

bool PilotKind::start(const EvalInfo& e, const PilotRequest& r, const std::string& dependency) {
    if (const auto refused = ensure_dirs(e)) {
        log_line("pilot for {} on {} not submitted: {}", e.key(), r.node, *refused);
        return false;
    }
    // The planner sizes a pilot by its own work; Slurm counts the limit from the allocation,
    // before the prolog and the batch script's start (launch_cost), so both bounds carry it,
    // as evalsched-sim's pilots do. Without it a window sized to startup + the shortest trial
    // left that trial a few seconds short once the pilot ran.
    const double time_min_s = r.time_min_s + config_.launch_cost_s, time_limit_s = r.time_limit_s + config_.launch_cost_s;
    const PilotRow p = begin_pilot(db_, e.id, r.gpus, r.node, time_min_s, time_limit_s, wall_clock_s());
    // The batch script only sleeps: no user environment, the daemon's minimal one.
    slurm::BatchJob job = job_for(e, p.tag, config_.partition, {"EVALSCHED_PILOT=" + p.tag});
    job.comment = job_comment(fmt::format("evalsched pilot {} gpus={}", e.key(), r.gpus), p.tag);
    job.script = pilot_script();
    job.time_limit_min = static_cast<std::uint32_t>(std::ceil(time_limit_s / 60));
    job.time_min_min = std::min(job.time_limit_min, static_cast<std::uint32_t>(std::ceil(time_min_s / 60)));
    job.gpus_per_node = r.gpus;
    job.required_node = r.node;
    // The precursor stage job on the node (Scheduler::stage_dependency): "" or "afterok:<job>".
    job.dependency = dependency;
    const auto id = submit_job(*this, p, job);
    if (id)
        log_line("pilot {} for {}: job {} on {} with {} GPU{}, --time-min {} --time {}", p.tag, e.key(), *id, r.node, r.gpus, r.gpus == 1 ? "" : "s",
                 job.time_min_min, job.time_limit_min);
    return id.has_value();
}

bool PilotKind::start_step(const PilotRow& p, const TrialRow& t, const EvalInfo& e, double limit_s) {
    if (const auto refused = ensure_dirs(e)) {
        trial_cannot_start(db_, t, *refused, wall_clock_s());
        log_line("trial {} not started: {}", t.trial_key, *refused);
        return false;
    }
    const AttemptRow a = begin_step(db_, t, p, limit_s, wall_clock_s());
    TrialScript ts = trial_script_for(config_, db_, e, t, a.tag);
    ts.record_step = true;
    std::vector<std::string> env;
    // The user's environment as a trial job gets it; the submitter's own Slurm job variables
    // would point srun at their job, not at the pilot.
    for (auto& v : job_for(e, a.tag, config_.partition, {"EVALSCHED_TRIAL=" + t.trial_key, "EVALSCHED_PILOT=" + p.tag},
                           load_environment(db_, e.id))
                       .environment)
        if (!v.starts_with("SLURM_")) env.push_back(std::move(v));
    if (const char* conf = std::getenv("SLURM_CONF")) env.push_back(std::string("SLURM_CONF=") + conf);
    // setpriv becomes the user (uid, gid, the user's groups) before srun runs: the step is
    // the user's, authenticated by munge as them, never root's.
    const std::vector<std::string> argv = {"setpriv",
                                           fmt::format("--reuid={}", e.uid),
                                           fmt::format("--regid={}", e.gid),
                                           "--init-groups",
                                           "--",
                                           "srun",
                                           fmt::format("--jobid={}", p.job_id.value_or(0)),
                                           "--nodes=1",
                                           "--ntasks=1",
                                           // The batch script holds the allocation's CPUs; one step runs at a time.
                                           "--overlap",
                                           "--mpi=none",
                                           fmt::format("--gres=gpu:{}", p.gpus),
                                           "--job-name=" + a.tag,
                                           "--quiet",
                                           "--output=" + log_path(e, a.tag),
                                           "--chdir=" + e.output_dir,
                                           "bash",
                                           "-c",
                                           trial_script(ts)};
    std::string error;
    if (!steps_.start(a.id, argv, env, error)) {
        step_lost(db_, a, "cannot start the step: " + error, wall_clock_s());
        log_line("trial {} not started in pilot {}: {}", t.trial_key, p.tag, error);
        return false;
    }
    log_line("trial {} attempt {}: a step of pilot {} (job {}) on {}, {:.0f} s of its time left", t.trial_key, a.number, p.tag,
             p.job_id.value_or(0), p.node, p.remaining_s(wall_clock_s()));
    return true;
}

void PilotKind::judge_steps() {
    for (const AttemptRow& a : open_steps(db_)) {
        const auto p = load_pilot(db_, a.pilot.value_or(0));
        const auto t = load_trial(db_, a.trial);
        const auto e = t ? load_evaluation(db_, t->evaluation) : std::nullopt;
        if (!p || !e) continue;
        const bool known = steps_.known(a.id);
        const std::optional<int> status = steps_.exited(a.id);
        if (known && !status) continue;  // srun still runs
        const RunRecord run = read_run(attempt_dir(*e, a.tag), *e);
        std::optional<std::int64_t> step_id;
        if (auto s = read_user_json(attempt_dir(*e, a.tag) + "/step.json", *e); s && s->contains("step") && (*s)["step"].is_number_integer())
            step_id = (*s)["step"].get<std::int64_t>();
        // Adopted after a restart: over once the wrapper wrote run.json, or once slurmctld no
        // longer runs its step (killed before the wrapper could write it); while neither, and
        // while the pilot lives, it still runs.
        if (!known && !run.exit_code) {
            if (!step_id || !alive(*p)) continue;
            std::string error;
            const auto running = slurm::step_running(static_cast<std::uint32_t>(a.job_id.value_or(0)), static_cast<std::uint32_t>(*step_id), error);
            if (!running || *running) continue;
        }
        if (step_id) step_id_recorded(db_, a, *step_id);
        const bool ok = run.exit_code && *run.exit_code == 0;
        if (!ok && !alive(*p) && t->state != "cancelled") {
            // It failed because its pilot ended under it: the trial's lease ends, not its chances.
            step_lost(db_, a, fmt::format("its pilot {} ended mid-trial ({})", p->tag, how_it_ended(job_of(*p))), wall_clock_s());
            log_line("trial {} attempt {}: pilot {} ended under it; pending again, the attempt not counted", t->trial_key, a.number, p->tag);
        } else {
            trials_.finish_step(a, known ? status : std::nullopt);
        }
        steps_.forget(a.id);
    }
}

void PilotKind::feed(std::vector<TrialRow>& pending, const std::vector<EvalInfo>& active, const PlanOptions& options,
                     const std::function<PendingTrial(const TrialRow&, const EvalInfo&)>& to_pending) {
    std::map<std::int64_t, int> busy;
    for (const AttemptRow& a : open_steps(db_)) ++busy[a.pilot.value_or(0)];
    const double now = wall_clock_s();
    for (const PilotRow& p : open()) {
        if (p.state != "running" || busy.count(p.id)) continue;
        auto e = std::find_if(active.begin(), active.end(), [&](const EvalInfo& x) { return x.id == p.evaluation; });
        if (e == active.end()) continue;  // release_inactive
        if (!alive(p)) continue;          // ending: reconcile sees it next round
        std::vector<PendingTrial> fits;
        std::vector<std::size_t> index;
        for (std::size_t i = 0; i < pending.size(); ++i) {
            const TrialRow& t = pending[i];
            if (t.evaluation != p.evaluation || t.gpus != p.gpus) continue;
            const std::string ex = "," + t.excluded_nodes + ",";
            if (ex.find("," + p.node + ",") != std::string::npos) continue;
            fits.push_back(to_pending(t, *e));
            index.push_back(i);
        }
        const double left = p.remaining_s(now);
        const auto next = pilot_next(fits, e->key(), p.gpus, left, options);
        if (!next) {
            release(p, fits.empty() ? "no trial of its evaluation left to run" : fmt::format("no trial left fits its {:.0f} s left", left));
            continue;
        }
        const TrialRow t = pending[index[*next]];
        pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(index[*next]));
        start_step(p, t, *e, pilot_trial_limit(fits[*next], options));
    }
}

void PilotKind::release(const PilotRow& p, const std::string& why) {
    std::string error;
    if (p.job_id && !slurm::signal_batch(static_cast<std::uint32_t>(*p.job_id), SIGURG, error)) {
        log_line("cannot release pilot {} (job {}): {}; trying again next round", p.tag, *p.job_id, error);
        return;
    }
    pilot_releasing(db_, p, why);
    released_at_.emplace(p.id, wall_clock_s());
    log_line("pilot {} (job {}) released after {} step{}: {}", p.tag, p.job_id.value_or(0), p.steps, p.steps == 1 ? "" : "s", why);
}

void PilotKind::release_inactive(const std::vector<EvalInfo>& active) {
    (void)active;
    for (const PilotRow& p : pilots_of_inactive(db_, {"running"})) release(p, "its evaluation is no longer active");
}

void PilotKind::chase_released() {
    const double now = wall_clock_s();
    for (const PilotRow& p : open()) {
        if (p.state != "releasing" || !p.job_id) continue;
        const slurm::JobView* j = job_of(p);
        if (!j || !j->active()) continue;  // ended: reconcile judges it
        const auto first = released_at_.emplace(p.id, now).first->second;
        std::string error;
        const auto id = static_cast<std::uint32_t>(*p.job_id);
        if (now - first < kReleaseGraceS) {
            if (!slurm::signal_batch(id, SIGURG, error)) log_line("cannot signal released pilot {} (job {}): {}", p.tag, id, error);
        } else if (slurm::cancel_job(id, error)) {
            log_line("pilot {} (job {}) still ran {:.0f} s after its release: cancelled", p.tag, id, now - first);
            released_at_.erase(p.id);
        } else {
            log_line("cannot cancel released pilot {} (job {}): {}; trying again next round", p.tag, id, error);
        }
    }
}

std::vector<PilotRow> PilotKind::open() { return open_pilots(db_); }

std::string PilotKind::describe(const PilotRow& p) { return fmt::format("pilot {} of evaluation {}", p.tag, p.evaluation); }

std::optional<std::uint32_t> PilotKind::owner(const PilotRow& p) {
    const auto e = load_evaluation(db_, p.evaluation);
    return e ? std::optional<std::uint32_t>(e->uid) : std::nullopt;
}

void PilotKind::adopted(const PilotRow& p, std::int64_t job_id) { pilot_submitted(db_, p, job_id); }
void PilotKind::lost(const PilotRow& p) { pilot_never_submitted(db_, p); }
void PilotKind::refused(const PilotRow& p, const std::string& error) {
    (void)error;  // submit_job logged it
    pilot_never_submitted(db_, p);
}
void PilotKind::submitted(const PilotRow& p, std::int64_t job_id) { pilot_submitted(db_, p, job_id); }

void PilotKind::running(const PilotRow& p, const std::string& nodes) {
    if (p.state == "releasing") return;
    const slurm::JobView* j = job_of(p);
    // The granted limit: backfill may have cut it toward --time-min (_reset_job_time_limit).
    const double granted = j && j->time_limit_min ? j->time_limit_min * 60.0 : p.time_limit_s;
    const double started = j && j->start_time > 0 ? static_cast<double>(j->start_time) : wall_clock_s();
    pilot_running(db_, p, nodes, granted, started);
    log_line("pilot {} (job {}) running on {}, granted {:.0f} min (asked {:.0f}-{:.0f})", p.tag, p.job_id.value_or(0), nodes, granted / 60,
             std::ceil(p.time_min_s / 60), std::ceil(p.time_limit_s / 60));
}

void PilotKind::finish(const PilotRow& p, const slurm::JobView* job) {
    // Steps first: one that finished its trial keeps what it did; one whose srun is still
    // tearing down is waited for (the next round, woken by its exit).
    for (const AttemptRow& a : open_steps(db_)) {
        if (a.pilot != p.id) continue;
        if (steps_.known(a.id) && !steps_.exited(a.id)) return;
    }
    judge_steps();
    const std::string how = how_it_ended(job);
    pilot_ended(db_, p, how, wall_clock_s());
    released_at_.erase(p.id);
    log_line("pilot {} (job {}) ended: {}{}", p.tag, p.job_id.value_or(0), how, p.state == "releasing" ? " (released)" : "");
}

std::vector<PilotRow> PilotKind::to_kill() { return pilots_of_inactive(db_, {"submitting", "queued"}); }

void PilotKind::killed(const PilotRow& p) {
    pilot_ended(db_, p, "cancelled with its evaluation before it ran", wall_clock_s());
}

}  // namespace acme::evalsched
