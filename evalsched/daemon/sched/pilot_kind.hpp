// Pilots (mode = pilots, issue 18) as a fourth kind of job in the lifecycle (lifecycle.hpp):
// one batch job per (evaluation, node, trial GPU count) that the core's plan_pilots asked
// for, sized by --time-min/--time to the node's backfill window, whose script only holds the
// allocation. The trials run inside it as job steps, one at a time, the longest that fits the
// granted time left first (pilot_next): `srun --jobid` as the evaluation's user, each step an
// attempt with its own exit code, log, telemetry, diagnosis and retry (TrialKind::finish_step).
// A step is leased to its pilot: when the pilot ends under it (killed, preempted, timed out,
// node failure) the trial is pending again and the attempt does not count. A pilot with
// nothing left that fits its remaining time is released at once (SIGURG to its batch
// script: it ends COMPLETED), as are the pilots of a cancelled evaluation.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/slurm/cluster.hpp"
#include "common/store/database.hpp"
#include "evalsched/core/planner.hpp"
#include "evalsched/daemon/config.hpp"
#include "evalsched/daemon/sched/lifecycle.hpp"
#include "evalsched/daemon/sched/pilot_steps.hpp"
#include "evalsched/daemon/sched/pilot_tail.hpp"
#include "evalsched/daemon/sched/trial_kind.hpp"
#include "evalsched/store/pilots.hpp"
#include "evalsched/store/rows.hpp"

namespace acme::evalsched {

class PilotKind {
public:
    using Row = PilotRow;
    // `trials` judges the steps; `wake` is called the moment a step's srun exits.
    PilotKind(const DaemonConfig& config, store::Database& db, TrialKind& trials, std::function<void()> wake)
        : config_(config), db_(db), trials_(trials), steps_(std::move(wake)) {}

    // What slurmctld shows this round; running() and finish() read the pilots' jobs from it.
    void observe(const TagIndex& by_tag) { by_tag_ = &by_tag; }

    // Submits the pilot plan_pilots asked for. `dependency`: "" or "afterok:<job>" (the
    // precursor stage job on that node, when one is wired in). False when it was not submitted.
    bool start(const EvalInfo& e, const PilotRequest& r, const std::string& dependency = "");

    // Steps whose srun exited (or, adopted after a restart, whose run.json appeared): judged.
    // A step that failed because its pilot ended under it is lost instead (not counted).
    void judge_steps();
    // Every running pilot without a step gets its next trial (pilot_next over `pending`, which
    // loses the trials given out), or is released when none fits its time left.
    void feed(std::vector<TrialRow>& pending, const std::vector<EvalInfo>& active, const PlanOptions& options,
              const std::function<PendingTrial(const TrialRow&, const EvalInfo&)>& to_pending);
    // Whether the evaluation's trials are client steps of pilots that serve (store v13).
    bool served(std::int64_t evaluation) {
        const StoredSuite* s = suite_of(evaluation);
        return s && s->served;
    }
    // Running pilots of evaluations no longer active: released (their steps end with them).
    void release_inactive(const std::vector<EvalInfo>& active);
    // Released pilots whose job still runs: the signal is sent again every round (one sent as
    // the batch step was still being launched is lost: slurmstepd had no script to signal yet),
    // and a pilot still running release_grace_s after its first release is cancelled, so a
    // lost signal never holds GPUs until the pilot's time limit.
    void chase_released();

    // The JobKind interface (lifecycle.hpp).
    std::vector<PilotRow> open();
    std::string describe(const PilotRow& p);
    std::optional<std::uint32_t> owner(const PilotRow& p);
    void adopted(const PilotRow& p, std::int64_t job_id);
    void lost(const PilotRow& p);
    void refused(const PilotRow& p, const std::string& error);
    void submitted(const PilotRow& p, std::int64_t job_id);
    void running(const PilotRow& p, const std::string& nodes);
    void finish(const PilotRow& p, const slurm::JobView* job);
    std::vector<PilotRow> to_kill();   // not yet running pilots of evaluations no longer active
    void killed(const PilotRow& p);

private:
    // A served evaluation's server for pilot p (pilot_serve.hpp): started when it has none,
    // checked while it starts; its base URL once it answers. nullopt: no trial for p this round
    // (starting, or failed and p released).
    std::optional<std::string> serve(const PilotRow& p, const EvalInfo& e, const StoredSuite& ss);
    void server_failed(const PilotRow& p, const EvalInfo& e, const std::string& why);
    // Tail re-sharding (pilot_tail.hpp): whether pending[i] was replaced by its pieces there.
    bool split_for_tail(const PilotRow& p, const EvalInfo& e, const PendingTrial& next, std::vector<TrialRow>& pending, std::size_t i);
    const StoredSuite* suite_of(std::int64_t evaluation);
    bool start_step(const PilotRow& p, const TrialRow& t, const EvalInfo& e, double limit_s, const Serving* serving, const std::string& url);
    void release(const PilotRow& p, const std::string& why);
    const slurm::JobView* job_of(const PilotRow& p);
    bool alive(const PilotRow& p);
    // slurmctld's bf_interval: how late a backfilled pilot may start. Read again every
    // kBackfillIntervalRefresh, so an `scontrol reconfigure` that changes it takes effect
    // without a restart.
    double backfill_interval();

    const DaemonConfig& config_;
    store::Database& db_;
    TrialKind& trials_;
    StepRunner steps_;
    const TagIndex* by_tag_ = nullptr;
    std::optional<double> bf_interval_s_;
    std::chrono::steady_clock::time_point bf_interval_read_at_;
    std::map<std::int64_t, double> released_at_;  // pilot id -> first release (this daemon's run)
    std::set<std::int64_t> stepped_;               // running steps whose step id is recorded
    // Pilots that serve: each pilot's server (its step runs in steps_ under -pilot id), and the
    // servers of an evaluation that never answered, in a row.
    struct Server {
        int port = 0;
        double started_at = 0;
        bool ready = false;
    };
    std::map<std::int64_t, Server> servers_;
    std::map<std::int64_t, int> serve_failures_;
    std::map<std::int64_t, std::optional<StoredSuite>> suites_;  // evaluation -> its stored suite
};

// How long a released pilot may take to end on its own before it is cancelled.
inline constexpr double kReleaseGraceS = 20;

}  // namespace acme::evalsched
