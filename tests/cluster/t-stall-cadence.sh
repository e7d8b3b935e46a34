#!/usr/bin/env bash
# Stall verdicts at the job's own pace, through the real sampler: the fixed windows are left at
# 600 s (longer than either job lives), the cadence keys at k 3, a 12 s floor and 10 steps. Both
# jobs step once a second (a log line and a heartbeat touch from one Python process, like a
# trainer's), their GPUs idle. The first then hangs for 40 s: the sampler learned its pace, so it
# records a verdict that says so, which the fixed 600 s window could never give in the job's
# life. The second pauses 6 s after learning (a checkpoint saved where the sampler cannot see),
# under the floor, then trains on: no verdict. The sampler does not read the jobs' processes here
# (stall_cadence_activity=off): this is the floor's case; t-stall-cadence-io.sh reads them.
. "$(dirname "$0")/lib.sh"
gpuacct() { "$ACME_BUILD_DIR/acct/gpuacct/gpuacct" --spool-dir "$(spool_dir)" "$@"; }

chmod 777 "$ACME_TEST_TMP"
use_uniform_scenario 0
small_stall_windows stall_spin_window=600 stall_idle_window=600 stall_cadence_k=3 stall_cadence_floor=12 stall_cadence_steps=10 \
  stall_cadence_activity=off
on_exit 'restore_plugstack'
scontrol update nodename=n[1-3] state=resume >/dev/null 2>&1

# 15 steps a second, a pause with nothing moving, more steps (trainer_steps, lib.sh).
hang=$(submit -N1 --gres=gpu:1 --gpu-telemetry=0.5 -o "$ACME_TEST_TMP/hang.out" --wrap "$(trainer_steps "time.sleep(40)" 0)")
pause=$(submit -N1 --gres=gpu:1 --gpu-telemetry=0.5 -o "$ACME_TEST_TMP/pause.out" --wrap "$(trainer_steps "time.sleep(6)" 5)")

for id in "$hang" "$pause"; do
  assert_eq COMPLETED "$(wait_job "$id" 120)" "job $id's end"
done
assert_contains "$(cat "$ACME_TEST_TMP/pause.out")" "done" "the pausing job's output"

node=$(job_nodes "$hang")
evidence=$(spool_query "$node" "SELECT evidence FROM stalls WHERE job_id = $hang")
assert_contains "$evidence" "x the job's longest step of " "the hung job's verdict: at its pace"
assert_contains "$evidence" " seen over " "the steps it was seen over"
case $evidence in *"fixed idle window"*) fail "the hung job was judged by the fixed window: $evidence" ;; esac
assert_contains "$(gpuacct --source spool -j "$hang" --detail 2>&1)" "x the job's longest step of " "the window in gpuacct"

node=$(job_nodes "$pause")
assert_eq "" "$(spool_query "$node" "SELECT evidence FROM stalls WHERE job_id = $pause")" "the pausing job's stall verdict"
