#include "evalsched/daemon/sched/pilot_kind.hpp"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <set>
#include <sys/wait.h>

#include <fmt/format.h>

#include "evalsched/daemon/evaluations.hpp"
#include "evalsched/daemon/log.hpp"
#include "evalsched/daemon/sched/job_files.hpp"
#include "evalsched/daemon/sched/job_outputs.hpp"
#include "evalsched/daemon/sched/job_script.hpp"
#include "evalsched/daemon/sched/pilot_serve.hpp"
#include "evalsched/store/attempts.hpp"

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

// One slurm_load_ctl_conf per this long at most (pilots are sized every round).
constexpr std::chrono::minutes kBackfillIntervalRefresh{5};
}  // namespace

double PilotKind::backfill_interval() {
    const auto now = std::chrono::steady_clock::now();
    if (!bf_interval_s_ || now - bf_interval_read_at_ >= kBackfillIntervalRefresh) {
        std::string error;
        const auto read = slurm::backfill_interval_s(error);
        // Never read yet: asked again next round, Slurm's default meanwhile. Read before: the
        // last value stands until the next refresh.
        if (!read && !bf_interval_s_) return 30;
        if (!read) {
            bf_interval_read_at_ = now;
            return *bf_interval_s_;
        }
        if (read != bf_interval_s_)
            log_line("pilots: slurmctld's bf_interval is {:g} s: a pilot's --time-min leaves that much of its window", *read);
        bf_interval_s_ = read;
        bf_interval_read_at_ = now;
    }
    return *bf_interval_s_;
}

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
    // The planner sizes a pilot by its own work; pilot_ask adds the launch cost (without it a
    // window sized to startup + the shortest trial left that trial a few seconds short) and
    // asks --time-min for the window, less a backfill cycle, as evalsched-sim's pilots do.
    const PilotAsk ask = pilot_ask(r, config_.launch_cost_s, backfill_interval());
    const PilotRow p = begin_pilot(db_, e.id, r.gpus, r.node, ask.time_min_s, ask.time_limit_s, wall_clock_s());
    // The batch script only sleeps: no user environment, the daemon's minimal one.
    slurm::BatchJob job = job_for(e, p.tag, config_.partition, {"EVALSCHED_PILOT=" + p.tag});
    job.comment = job_comment(fmt::format("evalsched pilot {} gpus={}", e.key(), r.gpus), p.tag);
    job.script = pilot_script();
    job.time_limit_min = static_cast<std::uint32_t>(std::lround(ask.time_limit_s / 60));
    job.time_min_min = static_cast<std::uint32_t>(std::lround(ask.time_min_s / 60));
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

// configure's AC_PATH_PROG result; Debian's path when built without it.
#ifndef ACME_SRUN
#define ACME_SRUN "/usr/bin/srun"
#endif

namespace {
// `srun --jobid` of a step in pilot p, running `script` with its output in the log of `tag`.
// srun by absolute path: root looks nothing up in a PATH, and the step's environment (the
// user's) cannot choose which srun runs. StepRunner execs it as the evaluation's user.
std::vector<std::string> step_argv(const PilotRow& p, const EvalInfo& e, const std::string& tag, const std::string& script) {
    return {ACME_SRUN,
            fmt::format("--jobid={}", p.job_id.value_or(0)),
            "--nodes=1",
            "--ntasks=1",
            // The batch script holds the allocation's CPUs; a server step and one trial step share them.
            "--overlap",
            "--mpi=none",
            fmt::format("--gres=gpu:{}", p.gpus),
            "--job-name=" + tag,
            "--quiet",
            "--output=" + log_path(e, tag),
            "--chdir=" + e.output_dir,
            "bash",
            "-c",
            script};
}

// The user's environment as a trial job gets it; the submitter's own Slurm job variables
// would point srun at their job, not at the pilot. A stored environment from before loader
// variables were refused (a follow's) is given without them.
std::vector<std::string> step_env(store::Database& db, const PilotRow& p, const EvalInfo& e, const std::string& tag, const DaemonConfig& config,
                                  std::vector<std::string> extra) {
    extra.push_back("EVALSCHED_PILOT=" + p.tag);
    std::vector<std::string> env;
    for (auto& v : job_for(e, tag, config.partition, std::move(extra), load_environment(db, e.id)).environment)
        if (!v.starts_with("SLURM_")) env.push_back(std::move(v));
    if (const char* conf = std::getenv("SLURM_CONF")) env.push_back(std::string("SLURM_CONF=") + conf);
    return env;
}

// The step of `tag` as e's user, as the group database has the user now: a user who left the
// evaluation's group since submitting no longer runs as it (identity_of keeps the stored gid
// only while the user is still a member).
StepLaunch step_launch(std::vector<std::string> argv, std::vector<std::string> env, const EvalInfo& e, const std::string& tag) {
    return StepLaunch{std::move(argv), std::move(env), identity_of(e.uid, e.gid), attempt_dir(e, tag)};
}

std::string server_tag(const PilotRow& p) { return p.tag + "-serve"; }
}  // namespace

bool PilotKind::start_step(const PilotRow& p, const TrialRow& t, const EvalInfo& e, double limit_s, const Serving* serving, const std::string& url) {
    if (const auto refused = ensure_dirs(e)) {
        trial_cannot_start(db_, t, *refused, wall_clock_s());
        log_line("trial {} not started: {}", t.trial_key, *refused);
        return false;
    }
    const AttemptRow a = begin_step(db_, t, p, limit_s, wall_clock_s());
    TrialScript ts = trial_script_for(config_, db_, e, t, a.tag);
    ts.record_step = true;
    std::vector<std::string> extra = {"EVALSCHED_TRIAL=" + t.trial_key};
    if (serving) {
        ts.command = client_command(ts.command, *serving, servers_.count(p.id) ? servers_[p.id].port : 0);
        extra.push_back("EVALSCHED_BASE_URL=" + url);
    }
    std::string error;
    if (!steps_.start(a.id, step_launch(step_argv(p, e, a.tag, trial_script(ts)), step_env(db_, p, e, a.tag, config_, std::move(extra)), e, a.tag),
                      error)) {
        step_lost(db_, a, "cannot start the step: " + error, wall_clock_s());
        log_line("trial {} not started in pilot {}: {}", t.trial_key, p.tag, error);
        return false;
    }
    log_line("trial {} attempt {}: a step of pilot {} (job {}) on {}, {:.0f} s of its time left{}", t.trial_key, a.number, p.tag,
             p.job_id.value_or(0), p.node, p.remaining_s(wall_clock_s()), serving ? ", against " + url : "");
    return true;
}

const StoredSuite* PilotKind::suite_of(std::int64_t evaluation) {
    auto it = suites_.find(evaluation);
    if (it == suites_.end()) it = suites_.emplace(evaluation, load_stored_suite(db_, evaluation)).first;
    return it->second ? &*it->second : nullptr;
}

std::optional<std::string> PilotKind::serve(const PilotRow& p, const EvalInfo& e, const StoredSuite& ss) {
    const double now = wall_clock_s();
    const std::string dir = attempt_dir(e, server_tag(p));
    auto it = servers_.find(p.id);
    if (it == servers_.end()) {
        // After a restart: a server that answered is adopted from its server.json; one that was
        // starting cannot be judged (its srun was this daemon's child), so the pilot goes.
        if (auto j = read_server_record(dir, e); j.value && j.value->ready && j.value->port) {
            const int port = *j.value->port;
            servers_[p.id] = Server{port, now, true};
            log_line("pilot {}: adopted its server on port {}", p.tag, port);
            return base_url(port);
        }
        if (const auto step = read_step_record(dir, e); step.value || step.bad()) {
            release(p, "its server was starting when evalschedd restarted");
            return std::nullopt;
        }
        if (const auto refused = ensure_dirs(e)) {
            release(p, "its server cannot start: " + *refused);
            return std::nullopt;
        }
        std::set<int> taken;
        for (const auto& [id, s] : servers_)
            if (auto q = load_pilot(db_, id); q && q->node == p.node && q->state != "ended") taken.insert(s.port);
        const int port = choose_port(config_.serve_port_min, config_.serve_port_max, p.id, taken);
        if (port < 0) {
            release(p, fmt::format("every port of serve_ports {}-{} is taken on {}", config_.serve_port_min, config_.serve_port_max, p.node));
            return std::nullopt;
        }
        TrialScript ts;
        set_staging(ts, config_, db_, e, dir);
        ts.done_marker = dir + "/served";
        ts.command = server_command(ss.suite, p.gpus, port);
        ts.record_step = true;
        std::string error;
        // The server's step is kept under -pilot id: attempts have positive ids.
        if (!steps_.start(-p.id,
                          step_launch(step_argv(p, e, server_tag(p), trial_script(ts)), step_env(db_, p, e, server_tag(p), config_, {}), e, server_tag(p)),
                          error)) {
            release(p, "its server step cannot start: " + error);
            return std::nullopt;
        }
        servers_[p.id] = Server{port, now, false};
        log_line("pilot {} (job {}): server starting on {} port {} (log {})", p.tag, p.job_id.value_or(0), p.node, port, log_path(e, server_tag(p)));
        return std::nullopt;
    }
    Server& s = it->second;
    if (const auto status = steps_.exited(-p.id)) {
        server_failed(p, e,
                      fmt::format("its server {} (status {}): see {}", s.ready ? "ended" : "ended before it answered",
                                  WIFEXITED(*status) ? WEXITSTATUS(*status) : 128 + WTERMSIG(*status), log_path(e, server_tag(p))));
        return std::nullopt;
    }
    if (!s.ready) {
        const auto j = read_server_record(dir, e);
        if (j.bad()) {
            server_failed(p, e, "attempt failed: " + j.problem);
            return std::nullopt;
        }
        if (j.value && j.value->ready) {
            s.ready = true;
            serve_failures_.erase(e.id);
            log_line("pilot {}: its server answers {} after {:.1f} s", p.tag, base_url(s.port) + ss.suite.serving->probe, now - s.started_at);
        } else {
            if (now - s.started_at > ss.suite.serving->ready_timeout_s + kServeGraceS)
                server_failed(p, e, fmt::format("its server did not answer within serve_timeout ({:.0f} s): see {}", ss.suite.serving->ready_timeout_s,
                                                log_path(e, server_tag(p))));
            return std::nullopt;
        }
    }
    return base_url(s.port);
}

void PilotKind::server_failed(const PilotRow& p, const EvalInfo& e, const std::string& why) {
    const bool answered = servers_.count(p.id) && servers_[p.id].ready;
    release(p, why);
    if (answered) return;
    // A server that never answers would otherwise cost a pilot after pilot, forever.
    if (++serve_failures_[e.id] < kMaxServeFailures) return;
    const std::string reason = fmt::format("the suite's serve_command never answered in {} pilots in a row (last: {})", kMaxServeFailures, why);
    for (const TrialRow& t : trials_in_state(db_, {"pending"}))
        if (t.evaluation == e.id) trial_cannot_start(db_, t, reason, wall_clock_s());
    log_line("evaluation {}: {}; its pending trials failed", e.id, reason);
    serve_failures_.erase(e.id);
}

bool PilotKind::split_for_tail(const PilotRow& p, const EvalInfo& e, const PendingTrial& next, std::vector<TrialRow>& pending, std::size_t i) {
    // The work left to this evaluation's pilots of p's size: unstarted trials, plus what the
    // running steps still need by their priors; and the GPUs those pilots hold.
    const double now = wall_clock_s();
    double left = 0;
    int gpus = 0;
    for (const TrialRow& t : pending)
        if (t.evaluation == e.id && t.gpus == p.gpus) left += t.gpus * t.median_s;
    std::map<std::int64_t, int> pilot_gpus;
    for (const PilotRow& q : open())
        if (q.evaluation == e.id && q.gpus == p.gpus && q.state == "running") {
            pilot_gpus[q.id] = q.gpus;
            gpus += q.gpus;
        }
    for (const AttemptRow& a : open_steps(db_))
        if (pilot_gpus.count(a.pilot.value_or(0)))
            if (auto t = load_trial(db_, a.trial)) left += t->gpus * std::max(0.0, t->median_s - (now - a.submitted_at));
    TailOptions to;
    to.min_piece_s = config_.tail_min_piece_s;
    const int factor = tail_split_factor(next, left, gpus, to);
    if (factor < 2) return false;
    const StoredSuite* ss = suite_of(e.id);
    if (!ss) return false;
    const TrialRow old = pending[i];
    const std::vector<Trial> pieces = split_trial(core_trial(old), ss->suite, core_checkpoint(e), factor);
    if (pieces.size() < 2) return false;
    std::vector<TrialRow> rows = replace_by_pieces(db_, old, pieces);
    if (rows.empty()) return false;
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
    log_line("trial {} ({:.0f} s) re-sharded into {} pieces for the tail: {:.0f} GPU-s left on {} GPU{} of pilots like {}", old.trial_key,
             old.median_s, rows.size(), left, gpus, gpus == 1 ? "" : "s", p.tag);
    for (TrialRow& r : rows) pending.push_back(std::move(r));
    return true;
}

void PilotKind::judge_steps() {
    for (const AttemptRow& a : open_steps(db_)) {
        // One step's trouble never stops the judging of the others (nor the round).
        try {
            const auto p = load_pilot(db_, a.pilot.value_or(0));
            const auto t = load_trial(db_, a.trial);
            const auto e = t ? load_evaluation(db_, t->evaluation) : std::nullopt;
            if (!p || !e) continue;
            const bool known = steps_.known(a.id);
            const std::optional<int> status = steps_.exited(a.id);
            // A step.json its user overwrote says nothing: the step is then judged by run.json alone.
            auto read_step = [&]() -> std::optional<std::int64_t> { return read_step_record(attempt_dir(*e, a.tag), *e).value; };
            if (known && !status) {
                // srun still runs; its step id is shown by evalsched status once its script wrote it.
                if (!stepped_.count(a.id))
                    if (const auto id = read_step()) {
                        step_id_recorded(db_, a, *id);
                        stepped_.insert(a.id);
                    }
                continue;
            }
            const std::optional<std::int64_t> step_id = read_step();
            stepped_.erase(a.id);
            const RunRecord run = read_run(attempt_dir(*e, a.tag), *e);
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
            if (!ok && run.exit_code && *run.exit_code == kServerLostExit && t->state != "cancelled" && suite_of(t->evaluation) &&
                suite_of(t->evaluation)->served) {
                // The pilot's server went away under the client: the trial is not at fault the first
                // time; a trial that loses its server twice counts (it may be what kills it).
                const std::string why = fmt::format("its pilot {}'s server stopped answering", p->tag);
                if (server_losses(db_, t->id) == 0) {
                    step_lost(db_, a, why, wall_clock_s());
                    log_line("trial {} attempt {}: {}; pending again, the attempt not counted", t->trial_key, a.number, why);
                } else {
                    trials_.finish_step(a, known ? status : std::nullopt);
                }
                steps_.forget(a.id);
                if (p->state == "running") release(*p, why);
                continue;
            }
            if (!ok && !alive(*p) && t->state != "cancelled") {
                // It failed because its pilot ended under it: the trial's lease ends, not its chances.
                step_lost(db_, a, fmt::format("its pilot {} ended mid-trial ({})", p->tag, how_it_ended(job_of(*p))), wall_clock_s());
                log_line("trial {} attempt {}: pilot {} ended under it; pending again, the attempt not counted", t->trial_key, a.number, p->tag);
            } else {
                trials_.finish_step(a, known ? status : std::nullopt);
            }
            steps_.forget(a.id);
        } catch (const std::exception& ex) {
            log_line("step attempt {} ({}): not judged this round: {}", a.id, a.tag, ex.what());
        }
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
        const StoredSuite* ss = suite_of(e->id);
        const Serving* serving = ss && ss->served && ss->suite.serving ? &*ss->suite.serving : nullptr;
        std::string url;
        // At most two re-shardings before a pilot takes its trial: the pieces are sized to the tail.
        for (int round = 0; round < 3; ++round) {
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
                break;
            }
            if (serving && url.empty()) {
                // The server first (started only for a pilot with a trial to take): no trial
                // for p until it answers.
                const auto ready = serve(p, *e, *ss);
                if (!ready) break;
                url = *ready;
            }
            if (round < 2 && split_for_tail(p, *e, fits[*next], pending, index[*next])) continue;
            const TrialRow t = pending[index[*next]];
            pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(index[*next]));
            start_step(p, t, *e, pilot_trial_limit(fits[*next], options), serving, url);
            break;
        }
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
    // Stored suites and server failure counts are kept only for active evaluations.
    auto is_active = [&](std::int64_t id) { return std::any_of(active.begin(), active.end(), [&](const EvalInfo& e) { return e.id == id; }); };
    std::erase_if(suites_, [&](const auto& kv) { return !is_active(kv.first); });
    std::erase_if(serve_failures_, [&](const auto& kv) { return !is_active(kv.first); });
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
    // Its server ended with its allocation.
    servers_.erase(p.id);
    steps_.forget(-p.id);
    log_line("pilot {} (job {}) ended: {}{}", p.tag, p.job_id.value_or(0), how, p.state == "releasing" ? " (released)" : "");
}

std::vector<PilotRow> PilotKind::to_kill() { return pilots_of_inactive(db_, {"submitting", "queued"}); }

void PilotKind::killed(const PilotRow& p) {
    pilot_ended(db_, p, "cancelled with its evaluation before it ran", wall_clock_s());
}

}  // namespace acme::evalsched
