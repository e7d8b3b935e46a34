#!/usr/bin/env bash
# A checkpoint save is no stall: three 2-node jobs train for 4 s, then pause with every GPU idle
# and the log quiet (10 s, or until its verdict is seen for the third: well past the 4 s window
# this test scales the stall windows down to), then finish. The first touches $ACME_HEARTBEAT_FILE through the pause, the second writes a
# checkpoint file that grows, both with --auto-recover: no verdict, never signalled, not
# requeued. The third does neither and has no --auto-recover: the sampler records the stall
# (log line, spool, the job's record, gpuacct's job view) and leaves the job alone, which then
# completes. The fourth (--auto-recover) is signalled and answers by logging, then trains on:
# the verdict is withdrawn during the grace period and the job is not cancelled.
# With stall_mail=user and slurm.conf's MailProg at a test double of mail(1), the third job's
# verdict is mailed once, to its --mail-user, as slurmctld mails; the --auto-recover jobs' never.
. "$(dirname "$0")/lib.sh"
gpuacct() { "$ACME_BUILD_DIR/acct/gpuacct/gpuacct" --spool-dir "$(spool_dir)" "$@"; }

chmod 777 "$ACME_TEST_TMP"
text=""
for g in 0 1 2 3; do
  text+=$(printf '[[gpu]]\nminor = %d\nutil = [95, 95, 95, 95, 0]\npower_mw = [300000, 300000, 300000, 300000, 60000]\nmem_util = [40, 40, 40, 40, 0]\n' "$g")$'\n'
done
use_scenario <<<"$text"
small_stall_windows stall_spin_window=4 stall_idle_window=4 stall_grace=4 stall_mail=user
on_exit 'rm -f "$ACME_MINICLUSTER_DIR/nvml/scenarios/default.toml"; restore_plugstack'
use_mail_prog

train='for s in 1 2 3 4 5 6 7 8; do echo "step $s"; sleep 0.5; done'
# One line of Python in a real trainer: pathlib.Path(os.environ["ACME_HEARTBEAT_FILE"]).touch(), here
# in one long-lived Python process like a trainer's (a fresh interpreter per touch can take
# longer than the 4 s window on a loaded machine).
hb=$(submit -N2 --gres=gpu:1 --gpu-telemetry=0.5 --auto-recover=1 -o "$ACME_TEST_TMP/hb.out" --wrap "
trap 'echo got USR1' USR1
$train
srun -N2 --ntasks-per-node=1 bash -c 'echo \$ACME_HEARTBEAT_FILE; stat -c \"hbdir %a %U\" \$(dirname \$ACME_HEARTBEAT_FILE); python3 -c \"import os, pathlib, time
for i in range(20): pathlib.Path(os.environ[\\\"ACME_HEARTBEAT_FILE\\\"]).touch(); time.sleep(0.5)\"'
echo saved")
ckpt=$ACME_TEST_TMP/ckpt
mkdir -p "$ckpt" && chmod 777 "$ckpt"
ck=$(submit -N2 --gres=gpu:1 --gpu-telemetry=0.5 --auto-recover=1 --ckpt-dir="$ckpt" -o "$ACME_TEST_TMP/ck.out" --wrap "
trap 'echo got USR1' USR1
$train
mkdir -p $ckpt/step-8
for i in \$(seq 20); do head -c 65536 /dev/zero >> $ckpt/step-8/model.bin; sleep 0.5; done
touch $ckpt/step-8/.complete
echo saved")
# The quiet job pauses, doing nothing at all (a blocking read of a line from a FIFO it holds open
# read-write, so neither end blocks on the open), until the test has seen its verdict (a loaded
# node's sampler may need longer than a fixed 10 s pause), at most 5 minutes. (--wrap is sh:
# dash's read has no -t.)
fifo=$ACME_TEST_TMP/quiet.fifo
rm -f "$fifo"
mkfifo "$fifo" && chmod 666 "$fifo" || fail "cannot make $fifo"
quiet=$(submit -N2 --gres=gpu:1 --gpu-telemetry=0.5 --mail-user=stall-watch@example.org -o "$ACME_TEST_TMP/quiet.out" --wrap "
$train
timeout 300 head -n 1 <>$fifo >/dev/null")
# Progress that resumes during the grace period: the verdict is withdrawn, the job not cancelled.
# The trainer answers the signal by logging (wait, unlike a foreground sleep, lets the trap run
# at once), then trains on: its pause ends with the signal, however late a loaded node's sampler
# sends it (at most 60 s), not after a fixed 10 s the grace period had to straddle.
resume=$(submit -N2 --gres=gpu:1 --gpu-telemetry=0.5 --auto-recover=1 -o "$ACME_TEST_TMP/resume.out" --wrap "
trap 'echo got USR1' USR1
$train
sleep 60 & wait \$!
for s in 9 10 11 12 13 14; do echo \"step \$s\"; sleep 0.5; done
echo done")

# Released once each of its nodes has its verdict row and its mail went (what is asserted below).
quiet_seen() {
  local n
  for n in $(job_nodes "$quiet"); do
    [ "$(spool_query "$n" "SELECT COUNT(*) FROM stalls WHERE job_id = $quiet" 2>/dev/null)" -ge 1 ] 2>/dev/null || return 1
  done
  grep -q "job $quiet: stall_mail: mailed" "$(spool_dir)"/*.sampler.log 2>/dev/null
}
deadline=$((SECONDS + $(wait_floor 60)))
until quiet_seen; do
  ((SECONDS < deadline)) || fail "the quiet job $quiet's stall verdict not on each of its nodes, or not mailed, within $(wait_floor 60) s (job $(job_field "$quiet" JobState)): $(grep -h "job $quiet: " "$(spool_dir)"/*.sampler.log)"
  sleep 0.3
done
echo go 1<>"$fifo"
for id in "$hb" "$ck" "$quiet" "$resume"; do
  assert_eq COMPLETED "$(wait_job "$id" 90)" "job $id's end"
  assert_eq 0 "$(job_field "$id" Restarts)" "job $id's restarts"
done
for id in "$hb" "$ck"; do
  for n in $(job_nodes "$id"); do
    assert_eq "" "$(spool_query "$n" "SELECT evidence FROM stalls WHERE job_id = $id")" "job $id's stall verdict on $n"
  done
  out=$(cat "$ACME_TEST_TMP/$([ "$id" = "$hb" ] && echo hb || echo ck).out")
  assert_contains "$out" "saved" "job $id's output"
  case $out in *"got USR1"*) fail "job $id was signalled: $out" ;; esac
done
assert_contains "$(cat "$ACME_TEST_TMP/hb.out")" "$ACME_MINICLUSTER_DIR/heartbeat/$hb/heartbeat.n" "ACME_HEARTBEAT_FILE in the job's environment"
# In a directory private to the job's user, made by the prolog and gone with the job.
assert_contains "$(cat "$ACME_TEST_TMP/hb.out")" "hbdir 700 $(id -un)" "the heartbeat directory's mode and owner"
[ ! -e "$ACME_MINICLUSTER_DIR/heartbeat/$hb" ] || fail "job $hb's heartbeat directory outlived the job"

# The control: stalled by every signal, recorded, never acted on.
first=$(job_nodes "$quiet" | head -n 1)
row=$(spool_query "$first" "SELECT COALESCE(named_node, '-') || '|' || action FROM stalls WHERE job_id = $quiet")
assert_eq "-|none" "$row" "the quiet job's verdict on $first"
assert_contains "$(spool_query "$first" "SELECT evidence FROM stalls WHERE job_id = $quiet")" "(log quiet, no heartbeat)" "its evidence"
grep -q "job $quiet: stalled: no progress for" "$(spool_dir)/$first.sampler.log" || fail "no stall line in $first's sampler log"
view=$(gpuacct --source spool -j "$quiet" --detail 2>&1)
assert_contains "$view" "Stalled: no progress since " "gpuacct's stall line for the quiet job"
assert_contains "$view" ", no node stood out: no progress for" "its evidence in gpuacct"
assert_contains "$view" "; action: none" "nothing done, in gpuacct"
if [ "$(cat "$ACME_MINICLUSTER_DIR/accounting" 2>/dev/null || echo yes)" != no ] && command -v sacct >/dev/null; then
  wait_record_nodes "$quiet" "$first"
  assert_contains "$(acme_records "$quiet" | tail -n 1)" '"stall": {' "the quiet job's record"
  assert_contains "$(gpuacct -j "$quiet" -l 2>&1)" "Stalled: no progress since " "gpuacct -l's stall line (slurmdbd)"
fi

# The resumed job: signalled, then spared; its verdict kept, marked withdrawn.
out=$(cat "$ACME_TEST_TMP/resume.out")
assert_contains "$out" "got USR1" "the resumed job's cue"
assert_contains "$out" "done" "the resumed job's end"
first=$(job_nodes "$resume" | head -n 1)
row=$(spool_query "$first" "SELECT withdrawn || '|' || action FROM stalls WHERE job_id = $resume")
assert_contains "$row" "1|signalled SIGUSR1, withdrawn after " "the resumed job's verdict on $first"
assert_contains "$row" ": the job's log grew (seen on " "what moved"
grep -q "job $resume: stall verdict withdrawn: " "$(spool_dir)/$first.sampler.log" || fail "no withdrawal line in $first's sampler log"
assert_contains "$(gpuacct --source spool -j "$resume" --detail 2>&1)" "Stall withdrawn: no progress since " "gpuacct's withdrawn line"

# stall_mail: one mail, for the quiet job's verdict, none for the --auto-recover jobs (the resumed
# one had a verdict too). MailProg's argv as slurmctld's: -s SUBJECT RECIPIENT.
sent=$(cat "$ACME_TEST_TMP/mail/sent" 2>/dev/null || true)
assert_eq 1 "$(printf '%s' "$sent" | grep -c .)" "mails sent (MailProg calls): $sent"
assert_contains "$sent" "-s|Slurm Job_id=$quiet Name=wrap Stalled, no progress for " "the quiet job's mail subject"
assert_contains "$sent" " s, no node named|stall-watch@example.org" "its recipient (the job's --mail-user)"
grep -q "job $quiet: stall_mail: mailed stall-watch@example.org" "$(spool_dir)"/*.sampler.log || fail "no stall_mail line in the sampler logs"
