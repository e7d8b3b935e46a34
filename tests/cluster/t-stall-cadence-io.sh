#!/usr/bin/env bash
# Hangs at the job's own pace, told from a long pause by what the job's processes do (#39 item 4):
# the fixed windows and the floor are left at 600 s (longer than either job lives), the cadence
# keys at 10 steps and the shipped margin, and the sampler reads the jobs' processes (the
# default), so the quiet a verdict needs is the job's longest quiet and twice it more (margin 2:
# at most 15 s for a learned quiet of 5 s, well inside the hang's 40 s). Both jobs
# step once a second (a log line and a heartbeat touch from one Python process, like a trainer's),
# their GPUs idle. The first then saves for 20 s: no log line, no heartbeat, nothing under a
# --ckpt-dir, only its writes (5 MiB/s into a file) to tell it from a hang; then it trains on: no
# verdict. The second hangs (40 s asleep, nothing moving): called at its pace, within the job's
# life, by a window the evidence says was its processes' quiet, never the 600 s floor.
. "$(dirname "$0")/lib.sh"
gpuacct() { "$ACME_BUILD_DIR/acct/gpuacct/gpuacct" --spool-dir "$(spool_dir)" "$@"; }

chmod 777 "$ACME_TEST_TMP"
use_uniform_scenario 0
small_stall_windows stall_spin_window=600 stall_idle_window=600 stall_cadence_k=3 stall_cadence_floor=600 stall_cadence_steps=10
on_exit 'restore_plugstack'
scontrol update nodename=n[1-3] state=resume >/dev/null 2>&1

# 15 steps a second, the pause, more steps (trainer_steps, lib.sh).
save="f = open('$ACME_TEST_TMP/save.bin', 'wb')
for i in range(100): f.write(b'x' * 1048576); f.flush(); os.fsync(f.fileno()); time.sleep(0.2)
f.close()"
saver=$(submit -N1 --gres=gpu:1 --gpu-telemetry=0.5 -o "$ACME_TEST_TMP/save.out" --wrap "$(trainer_steps "$save" 5)")
hang=$(submit -N1 --gres=gpu:1 --gpu-telemetry=0.5 -o "$ACME_TEST_TMP/hang.out" --wrap "$(trainer_steps "time.sleep(40)" 0)")

for id in "$saver" "$hang"; do
  assert_eq COMPLETED "$(wait_job "$id" 150)" "job $id's end"
done
assert_contains "$(cat "$ACME_TEST_TMP/save.out")" "done" "the saving job's output"
assert_eq 104857600 "$(stat -c %s "$ACME_TEST_TMP/save.bin")" "the bytes the save wrote"

node=$(job_nodes "$saver")
assert_eq "" "$(spool_query "$node" "SELECT evidence FROM stalls WHERE job_id = $saver")" "the saving job's stall verdict"

node=$(job_nodes "$hang")
evidence=$(spool_query "$node" "SELECT evidence FROM stalls WHERE job_id = $hang")
assert_contains "$evidence" ", the job's longest quiet of " "the hung job's verdict: at its pace"
assert_contains "$evidence" " steps and 200 % more, its processes idle too (" "the quiet it was judged on: its processes' too"
case $evidence in *"floor"* | *"fixed idle window"* | *"x the job's longest step"*) fail "the hung job was judged by the floor, the fixed window or k: $evidence" ;; esac
# Its pace is its steps (about a second, a look or two at most), not a pause.
step=$(sed -n "s/.*the job's longest quiet of \([0-9]*\) s .*/\1/p" <<<"$evidence")
[ -n "$step" ] && [ "$step" -le 5 ] || fail "the hung job's learned quiet is not its 1 s pace: $evidence"
assert_contains "$(gpuacct --source spool -j "$hang" --detail 2>&1)" "its processes idle too" "the window in gpuacct"
