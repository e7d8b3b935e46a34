#include "evalsched/daemon/sched/job_script.hpp"

#include <fmt/format.h>

namespace acme::evalsched {

std::string shell_quote(std::string_view s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'') out += "'\\''";
        else out += c;
    }
    return out + "'";
}

namespace {

// The staging lines both scripts run: source the helper, check the user's cache directory,
// copy (or find) the checkpoint there, record stage.json in $attempt_dir. Per user (a user's
// copy is theirs alone, in a directory checked to be theirs), then per node (nodes may share
// a host in tests).
template <class S>
std::string staging_lines(const S& s) {
    return fmt::format(
        R"sh(. {helper} || exit {stage_exit}
cache=$(evalsched_private_dir {cache} "evalsched-$(id -un)") || exit {stage_exit}
evalsched_stage {ckpt} "$cache/${{SLURMD_NODENAME:-$(hostname -s)}}" {max_bytes} "$attempt_dir/stage.json" {patterns} ||
  {{ echo "evalsched: staging "{ckpt}" failed" >&2; exit {stage_exit}; }}
)sh",
        fmt::arg("helper", shell_quote(s.stage_helper)), fmt::arg("stage_exit", kStageFailedExit), fmt::arg("ckpt", shell_quote(s.checkpoint_path)),
        fmt::arg("cache", shell_quote(s.stage_dir)), fmt::arg("patterns", shell_quote(s.stage_patterns)),
        fmt::arg("max_bytes", static_cast<long long>(s.stage_cache_bytes)));
}

}  // namespace

std::string trial_script(const TrialScript& t) {
    std::string rm;
    for (const auto& f : t.result_files) rm += " " + shell_quote(f);
    return fmt::format(
        R"sh(#!/bin/bash
# Submitted by evalschedd. Runs as the evaluation's owner.
set -u
attempt_dir={attempt}
mkdir -p "$attempt_dir" || exit 1
{step}rm -f{rm} {marker}
# The first trial on a node copies the checkpoint (unless a stage job did); the others wait
# for that copy and reuse it.
{staging}export EVALSCHED_STAGED
start=$(date +%s.%N)
( {command} )
rc=$?
end=$(date +%s.%N)
printf '{{"exit_code": %d, "start": %s, "end": %s}}\n' "$rc" "$start" "$end" > "$attempt_dir/run.json"
[ "$rc" -eq 0 ] && : > {marker}
exit "$rc"
)sh",
        fmt::arg("attempt", shell_quote(t.attempt_dir)), fmt::arg("rm", rm),
        fmt::arg("step", t.record_step ? "printf '{\"job\": %s, \"step\": %s}\\n' \"${SLURM_JOB_ID:-null}\" \"${SLURM_STEP_ID:-null}\" > \"$attempt_dir/step.json\"\n" : ""), fmt::arg("marker", shell_quote(t.done_marker)), fmt::arg("staging", staging_lines(t)),
        fmt::arg("command", t.command));
}

std::string stage_script(const StageScript& s) {
    return fmt::format(
        R"sh(#!/bin/bash
# Submitted by evalschedd: copies the checkpoint into this node's cache before the GPU trials
# placed here start (they depend on this job). CPU only. Runs as the evaluation's owner.
set -u
attempt_dir={attempt}
mkdir -p "$attempt_dir" || exit 1
{staging})sh",
        fmt::arg("attempt", shell_quote(s.attempt_dir)), fmt::arg("staging", staging_lines(s)));
}

std::string pilot_script() {
    return R"sh(#!/bin/bash
# Submitted by evalschedd: a pilot allocation (mode = pilots). It only holds the GPUs; evalschedd
# runs the evaluation's trials in it as job steps and releases it with SIGURG to this script.
trap 'exit 0' URG TERM
while :; do sleep 30 & wait $!; done
)sh";
}

std::string metric_script(const MetricScript& m) {
    std::string checks;
    for (const auto& [marker, trial] : m.done_markers)
        checks += fmt::format("[ -e {} ] || {{ echo \"evalsched: trial \"{}\" has not finished its inference; the metric job waits for it\" >&2; exit {}; }}\n",
                              shell_quote(marker), shell_quote(trial), kMetricNotReadyExit);
    std::string predictions;
    for (const auto& dir : m.prediction_dirs.empty() ? std::vector<std::string>{m.output_dir} : m.prediction_dirs)
        predictions += fmt::format("if [ -z \"$(ls -A {0} 2>/dev/null)\" ]; then\n"
                                   "  echo \"evalsched: no predictions in \"{0}\": inference wrote nothing, nothing to score\" >&2\n"
                                   "  exit {1}\n"
                                   "fi\n",
                                   shell_quote(dir), kNoPredictionsExit);
    return fmt::format(
        R"sh(#!/bin/bash
# Submitted by evalschedd: the CPU metric job of one dataset, after every trial holding a piece of it.
set -u
attempt_dir={attempt}
mkdir -p "$attempt_dir" || exit 1
{checks}{predictions}mkdir -p {out} || exit 1
rm -f {out}/result.json
start=$(date +%s.%N)
( {command} )
rc=$?
end=$(date +%s.%N)
printf '{{"exit_code": %d, "start": %s, "end": %s}}\n' "$rc" "$start" "$end" > "$attempt_dir/run.json"
exit "$rc"
)sh",
        fmt::arg("attempt", shell_quote(m.attempt_dir)), fmt::arg("checks", checks), fmt::arg("predictions", predictions),
        fmt::arg("out", shell_quote(m.output_dir)),
fmt::arg("command", m.command));
}

}  // namespace acme::evalsched
