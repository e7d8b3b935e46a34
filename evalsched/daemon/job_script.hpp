// The batch scripts evalschedd submits: a trial (stage the checkpoint into the node-local
// cache, run the suite's command, record its run time) and a trial's CPU metric job. Pure text
// generation; every value from outside is single-quoted for bash.
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
    std::string command;          // rendered by the core
};
std::string trial_script(const TrialScript& t);

// Runs after the trial (afterany) on CPUs only; refuses to score when inference left no
// predictions (the output check), so a failed trial never yields a score.
std::string metric_script(const std::string& output_dir, const std::string& command);

// The wrapper's exit status when staging failed: the diagnosis of a staging failure is the
// shared storage's, not the evaluation's.
inline constexpr int kStageFailedExit = 75;

}  // namespace acme::evalsched
