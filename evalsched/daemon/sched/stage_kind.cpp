#include "evalsched/daemon/sched/stage_kind.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "evalsched/daemon/evaluations.hpp"
#include "evalsched/daemon/sched/job_files.hpp"
#include "evalsched/daemon/sched/job_outputs.hpp"
#include "evalsched/daemon/sched/job_script.hpp"
#include "evalsched/daemon/sched/lifecycle.hpp"
#include "evalsched/daemon/log.hpp"
#include "evalsched/daemon/sched/trial_kind.hpp"

namespace acme::evalsched {

static_assert(JobKind<StageKind>);

double stage_time_limit_s(double stage_s) { return std::max(120.0, 2 * std::max(0.0, stage_s) + 60); }

std::optional<std::int64_t> StageKind::start(const EvalInfo& e, const std::string& node, int number, double stage_s) {
    if (const auto refused = ensure_dirs(e)) {
        log_line("stage job of evaluation {} on {} not started: {}", e.id, node, *refused);
        return std::nullopt;
    }
    const StageRow s = begin_stage(db_, e.id, node, number, wall_clock_s());
    StageScript ss;
    set_staging(ss, config_, db_, e, attempt_dir(e, s.tag));
    slurm::BatchJob job = job_for(e, s.tag, config_.partition, {}, load_environment(db_, e.id));
    job.comment = job_comment(fmt::format("evalsched stage {}/{} on {}", e.name, e.checkpoint, node), s.tag);
    job.script = stage_script(ss);
    job.time_limit_min = static_cast<std::uint32_t>(std::ceil(stage_time_limit_s(stage_s) / 60));
    job.gpus_per_node = 0;  // CPU only: a copy never holds a GPU
    job.required_node = node;
    const auto id = submit_job(*this, s, job);
    if (id) log_line("{}: job {} with --time {}", describe(s), *id, job.time_limit_min);
    return id;
}

std::vector<StageRow> StageKind::open() { return open_stages(db_); }

std::string StageKind::describe(const StageRow& s) {
    return fmt::format("stage job {} of evaluation {} on {}", s.number, s.evaluation, s.node);
}

std::optional<std::uint32_t> StageKind::owner(const StageRow& s) {
    const auto e = load_evaluation(db_, s.evaluation);
    return e ? std::optional<std::uint32_t>(e->uid) : std::nullopt;
}

void StageKind::adopted(const StageRow& s, std::int64_t job_id) { stage_submitted(db_, s, job_id); }
void StageKind::lost(const StageRow& s) { stage_lost(db_, s); }
void StageKind::refused(const StageRow& s, const std::string& error) {
    stage_refused(db_, s, "slurmctld refused the stage job: " + error, wall_clock_s());
}
void StageKind::submitted(const StageRow& s, std::int64_t job_id) { stage_submitted(db_, s, job_id); }
void StageKind::running(const StageRow& s, const std::string& nodes) { stage_running(db_, s, nodes); }
std::vector<StageRow> StageKind::to_kill() { return stages_to_kill(db_); }
void StageKind::killed(const StageRow& s) { stage_killed(db_, s, wall_clock_s()); }

void StageKind::finish(const StageRow& s, const slurm::JobView* job) {
    const auto e = load_evaluation(db_, s.evaluation);
    if (!e) return;
    StageOutcome o;
    const std::string dir = attempt_dir(*e, s.tag);
    const auto stage = read_stage_record(dir, *e);
    if (stage.value) {
        o.recorded = true;
        o.copied = stage.value->copied;
        o.bytes = stage.value->bytes;
        o.seconds = stage.value->seconds;
    }
    // Purged from slurmctld's memory: its stage.json is the proof it ran to the end.
    o.ok = !stage.bad() && (job ? job->succeeded() : o.recorded);
    // Its reason as a trial's staging failure would read (the wrapper's line names the cause),
    // or what is wrong with the record its user overwrote.
    if (stage.bad()) o.reason = "attempt failed: " + stage.problem;
    else if (!o.ok) o.reason = diagnose_failure(nullptr, log_path(*e, s.tag), *e, job).reason;
    finish_stage(db_, s, o, e->key(), wall_clock_s());
    if (o.ok) log_line("{} done: {} ({} bytes in {:.3f} s)", describe(s), o.copied ? "copied" : "a copy was there", o.bytes, o.seconds);
    else log_line("{} failed: {}{}", describe(s), o.reason, s.number < kStageTries ? "; the next trial there retries it" : "; trials there stage themselves");
}

}  // namespace acme::evalsched
