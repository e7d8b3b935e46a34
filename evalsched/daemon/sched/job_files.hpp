// What every job evalschedd submits (a trial's attempt, a dataset's metric job) shares: where
// its files are under the evaluation's output directory, the directories made for it, the
// environment it runs with, what its results hold (job_outputs.hpp reads what it left behind),
// and the diagnosis of a failed one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/diagnose/engine.hpp"
#include "common/slurm/cluster.hpp"
#include "evalsched/daemon/sched/job_outputs.hpp"
#include "evalsched/store/attempts.hpp"
#include "evalsched/store/rows.hpp"

namespace acme::evalsched {

// Now, in Unix seconds with sub-second precision (the store's times).
double wall_clock_s();

// <output>/attempts/<tag>: the wrapper's stage.json and run.json.
std::string attempt_dir(const EvalInfo& e, const std::string& tag);
// Present once a trial's command succeeded (job_script.hpp): what its metric jobs check.
std::string done_marker(const EvalInfo& e, std::int64_t trial);
// <output>/logs/<tag>.out: the job's stdout and stderr.
std::string log_path(const EvalInfo& e, const std::string& tag);
// Where the core renders {output} for a part (trials.cpp output_dir): the result lands there.
std::string part_dir(const EvalInfo& e, const TrialRow& t, const std::string& dataset);

// The output directory handed to the user, and logs/, attempts/, inference-done/ made in it as
// the user (user_files.hpp: root never resolves a path in it): Slurm opens the job's stdout as
// the user, and the jobs write their results there. The one-line reason when the user's
// directory holds something else there (a symlink, a file), nullopt when all is ready.
std::optional<std::string> ensure_dirs(const EvalInfo& e);

// A batch job with what every evalsched job has: its tag as the name, the evaluation's user,
// a plain environment (plus `extra`), the partition, the output directory, its log.
// `user_env`: the environment the evaluation was submitted from; the job gets it with the
// daemon's own variables (EVALSCHED_*, HOME, USER, LOGNAME) on top, or, when it is empty, a
// minimal PATH.
slurm::BatchJob job_for(const EvalInfo& e, const std::string& tag, const std::string& partition, std::vector<std::string> extra,
                        const std::vector<std::string>& user_env = {});

// What a trial cost beyond its inference: the wrapper's wall time around the command (run.json,
// which starts after the staging copy) minus the inference_s its parts reported. That is the
// harness's init, the model load from the node-local copy, reading datasets when the harness
// does not count it as inference, and writing results: what every trial pays once, and what
// bundling amortizes. Not Slurm's launch (before the script) and not staging (model_loads).
// Unknown when a part did not report inference_s. Every trial today loads the model itself,
// in its own job or in a pilot's step; a client step against a model a pilot already serves
// costs something else and must leave it unset.
std::optional<double> measured_startup(const RunRecord& run, const std::optional<double>& inference);

// Numeric scores of a result.json: {"scores": {...}} or the object itself.
std::vector<Outcome::Score> scores_of(const nlohmann::json& result, const std::string& dataset);

// (category, reason) of a failed job from its log tail (read as the user) and Slurm's view of
// it; `engine` may be null (no rules loaded): the cause is then unknown unless Slurm says.
// `evidence`: the log line that decided it, else the log's last line (what a user reads first
// when nothing decided: usually the harness's own last word on stderr); "" for an empty log.
struct Failure {
    std::string category, reason, evidence;
};
Failure diagnose_failure(const diagnose::Engine* engine, const std::string& log, const EvalInfo& e, const slurm::JobView* job);

}  // namespace acme::evalsched
