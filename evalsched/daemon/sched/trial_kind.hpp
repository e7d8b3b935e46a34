// A trial's attempts as one kind of job in the lifecycle (lifecycle.hpp): each attempt is one
// Slurm job on the node the planner chose, running the trial script (stage the checkpoint,
// run the suite's command). A finished attempt is judged from Slurm's view and the files it
// left: scores from each part's result.json, or a diagnosis that decides whether it is retried
// (core/decisions.hpp) and which node the retry avoids.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/diagnose/engine.hpp"
#include "common/slurm/cluster.hpp"
#include "common/store/database.hpp"
#include "evalsched/daemon/config.hpp"
#include "evalsched/daemon/evaluations.hpp"
#include "evalsched/daemon/sched/job_script.hpp"
#include "evalsched/store/attempts.hpp"
#include "evalsched/store/rows.hpp"

namespace acme::evalsched {

// The trial script's inputs for attempt `tag` of `t`: a trial job's and a pilot step's alike.
// The staging fields a trial script and a stage job's script share (job_script.hpp), from
// the daemon's configuration and the evaluation: one place, so both copy the same files into
// the same cache.
template <class S>
void set_staging(S& s, const DaemonConfig& config, store::Database& db, const EvalInfo& e, const std::string& attempt) {
    s.stage_helper = config.stage_helper;
    s.stage_dir = config.stage_dir;
    s.stage_cache_bytes = config.stage_cache_bytes;
    s.checkpoint_path = e.path;
    s.stage_patterns = load_stage(db, e.id);
    s.attempt_dir = attempt;
}
TrialScript trial_script_for(const DaemonConfig& config, store::Database& db, const EvalInfo& e, const TrialRow& t, const std::string& tag);

class TrialKind {
public:
    using Row = AttemptRow;
    // `engine` may be null (no diagnosis rules loaded).
    TrialKind(const DaemonConfig& config, store::Database& db, const diagnose::Engine* engine)
        : config_(config), db_(db), engine_(engine) {}

    // A new attempt of `t` on `node` with --time time_limit_s, submitted; false when slurmctld refused it.
    // `dependency`: Slurm's --dependency ("afterok:<stage job>"), "" for none.
    bool start(const TrialRow& t, const EvalInfo& e, const std::string& node, double time_limit_s, const std::string& dependency = "");

    // A job step of a pilot ended (mode = pilots): judged as a trial job is, from srun's wait
    // status (nullopt: the step was adopted after a restart; run.json's exit code then) and
    // the files it left, then stored (scores, retry, diagnosis) like a job's attempt.
    void finish_step(const AttemptRow& a, std::optional<int> wait_status);

    // The JobKind interface (lifecycle.hpp).
    std::vector<AttemptRow> open();
    std::string describe(const AttemptRow& a);
    std::optional<std::uint32_t> owner(const AttemptRow& a);
    void adopted(const AttemptRow& a, std::int64_t job_id);
    void lost(const AttemptRow& a);
    void refused(const AttemptRow& a, const std::string& error);
    void submitted(const AttemptRow& a, std::int64_t job_id);
    void running(const AttemptRow& a, const std::string& nodes);
    void finish(const AttemptRow& a, const slurm::JobView* job);
    std::vector<AttemptRow> to_kill();
    void killed(const AttemptRow& a);

    // When the GPUs of finished attempts were freed (Outcome::ended_at), oldest first, not yet
    // given to a next trial: the scheduler pops one per submission to measure how long a freed
    // GPU stayed idle, and forgets them when nothing is left to start.
    std::vector<double>& freed_at() { return freed_at_; }

private:
    Outcome judge(const AttemptRow& a, const TrialRow& t, const EvalInfo& e, const slurm::JobView* job);

    const DaemonConfig& config_;
    store::Database& db_;
    const diagnose::Engine* engine_;
    std::vector<double> freed_at_;
};

}  // namespace acme::evalsched
