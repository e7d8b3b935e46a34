// The batch scripts evalschedd submits: a trial (stage the checkpoint into the node-local
// cache, run the suite's command, record its run time) and a dataset's CPU metric job. Pure
// text generation; every value from outside is single-quoted for bash.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace acme::evalsched {

// The staged checkpoint's path inside a trial: the suite's {checkpoint} renders to it.
inline constexpr std::string_view kStagedVar = "\"$EVALSCHED_STAGED\"";

std::string shell_quote(std::string_view s);

struct TrialScript {
    std::string stage_helper;     // evalsched-stage.sh, sourced
    std::string stage_dir;        // <stage_dir>/evalsched-<user>/<node>/ holds the cache
    double stage_cache_bytes = 0;
    std::string checkpoint_path;
    std::string attempt_dir;      // stage.json and run.json land here
    std::vector<std::string> result_files;  // removed before the run: a stale one is no result
    // Written when the command succeeds, removed before it runs: the metric jobs' proof that
    // this trial's predictions are complete.
    std::string done_marker;
    std::string command;          // rendered by the core
    std::string stage_patterns = {};  // the suite's stage globs, one per line; empty: everything
    // A job step in a pilot (mode = pilots): the script records its step id in step.json, so
    // the attempt names the step sacct and gpuacct show.
    bool record_step = false;
};
std::string trial_script(const TrialScript& t);

// A precursor stage job (stage_kind.hpp): the trial script's staging alone, CPU only, so the
// node's trials find a complete copy and take only a shared lock.
struct StageScript {
    std::string stage_helper, stage_dir;
    double stage_cache_bytes = 0;
    std::string checkpoint_path;
    std::string attempt_dir;      // stage.json lands here
    std::string stage_patterns;
};
std::string stage_script(const StageScript& s);

// A pilot's batch script (mode = pilots): it only holds the allocation while evalschedd runs
// trials in it as job steps. SIGURG (evalschedd releasing it: scancel --batch -s URG; its default
// action is to ignore, so one that arrives before the trap is set is lost, not fatal) or
// SIGTERM ends it with exit 0, so a released pilot ends COMPLETED, not CANCELLED.
std::string pilot_script();

struct MetricScript {
    std::string attempt_dir;      // run.json lands here
    std::string output_dir;       // the dataset's: every shard's or the bundle's predictions
    // (marker, trial) of every trial holding a piece of the dataset: all must exist.
    std::vector<std::pair<std::string, std::string>> done_markers;
    std::string command;          // rendered by the core
    // Where inference must have left something: empty means output_dir. A suite group's job
    // scores no predictions of its own: its leaves' directories (output_dir is then created).
    std::vector<std::string> prediction_dirs;
};
// Runs after the dataset's trials (afterany) on CPUs only. The output check: it refuses to
// score while a trial has not succeeded (kMetricNotReadyExit: evalschedd waits for the retry)
// or when inference left no predictions (kNoPredictionsExit), so a failed or partial
// inference never yields a score.
std::string metric_script(const MetricScript& m);

// The wrapper's exit status when staging failed: the diagnosis of a staging failure is the
// shared storage's, not the evaluation's.
inline constexpr int kStageFailedExit = 75;
// The metric job's output check (sysexits' EX_UNAVAILABLE and EX_NOINPUT).
inline constexpr int kMetricNotReadyExit = 69;
inline constexpr int kNoPredictionsExit = 66;

}  // namespace acme::evalsched
