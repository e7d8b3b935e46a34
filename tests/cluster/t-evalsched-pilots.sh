#!/usr/bin/env bash
# mode = pilots (issue 18): evalschedd holds per-node pilot allocations and runs the trials in
# them as job steps. Every dataset gets its score; sacct shows each pilot COMPLETED (released
# by SIGURG to its batch script) with one step per trial it ran, each with its own exit code;
# a dataset that fails with an ECC error fails in its step, is retried on another node, and its
# pilot lives on; scancel of a pilot mid-trial loses nothing (the trial reruns in another
# pilot, its lost attempt not counted); kill -9 of the daemon mid-step loses nothing either.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/evalsched-lib.sh"
es_setup
echo "mode=pilots" >>"$ES"/evalsched.conf
fake="$ACME_SRC_DIR/scripts/fake-eval --checkpoint {checkpoint} --task {dataset} --out {output} --fail-dir $ES/fail"
# Four GPUs per trial: one pilot per node (3 nodes x 4 GPUs), so each pilot runs several trials.
{
  printf '[suite]\nname = "pilots"\ncommand = "%s"\ngpus = 4\n' "$fake"
  # The longest first: "slow" is the first step of a pilot, long enough to be cancelled mid-run.
  printf '\n[[dataset]]\nname = "slow"\nkind = "generation"\nprior = "20s"\ncommand = "%s --seconds 20"\n' "$fake"
  for d in mmlu cmmlu ceval arc_c arc_e gsm8k; do printf '\n[[dataset]]\nname = "%s"\nkind = "generation"\nprior = "3s"\n' "$d"; done
} >"$ES"/pilots.toml
chmod 644 "$ES"/pilots.toml
: >"$ES"/fail/arc_c.infra
chmod 666 "$ES"/fail/*
es_start
id=$(es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/pilots.toml)
[ -n "$id" ] || fail "the evaluation was not submitted"

# scancel the pilot that runs "slow" while its step runs.
deadline=$((SECONDS + 60))
while :; do
  victim=$(es_sql "SELECT p.job_id FROM attempts a JOIN trials t ON t.id = a.trial JOIN pilots p ON p.id = a.pilot
                   WHERE t.datasets = 'slow' AND a.state = 'running' LIMIT 1")
  [ -n "$victim" ] && break
  ((SECONDS < deadline)) || { cat "$ES"/daemon.log >&2; fail "no step of 'slow' started in a pilot within 60 s"; }
  sleep 0.2
done
sleep 2
scancel "$victim"
echo "cancelled pilot job $victim mid-trial"
# kill -9 of the daemon while steps run: after the restart it adopts them (their srun gone)
# and judges each from what it leaves; no trial runs twice.
deadline=$((SECONDS + 60))
until [ -n "$(es_sql "SELECT id FROM attempts WHERE state = 'running' AND pilot IS NOT NULL LIMIT 1")" ]; do
  ((SECONDS < deadline)) || fail "no step running to kill the daemon under"
  sleep 0.2
done
es_kill9_restart

assert_eq done "$(es_wait "$id" 180)" "evaluation state"
assert_eq 7 "$(es_sql "SELECT COUNT(*) FROM results WHERE evaluation = $id")" "scores stored"
assert_eq 0 "$(es_sql "SELECT COUNT(*) FROM attempts WHERE pilot IS NULL")" "trial jobs of their own in pilots mode"
assert_eq 7 "$(es_sql "SELECT COUNT(*) FROM attempts WHERE state = 'done'")" "trials done (each once, across the restart)"
# The lease: the cancelled step is 'lost', not counted; the trial's one counted attempt is its rerun.
assert_eq 1 "$(es_sql "SELECT COUNT(*) FROM attempts a JOIN trials t ON t.id = a.trial WHERE t.datasets = 'slow' AND a.state = 'lost'")" "lost attempts of slow"
assert_eq 1 "$(es_sql "SELECT attempts FROM trials WHERE datasets = 'slow'")" "attempts counted for slow"
rerun=$(es_sql "SELECT a.job_id FROM attempts a JOIN trials t ON t.id = a.trial WHERE t.datasets = 'slow' AND a.state = 'done'")
[ -n "$rerun" ] && [ "$rerun" != "$victim" ] || fail "slow did not rerun in another pilot (done in job '$rerun', cancelled $victim)"
# The ECC failure: failed in its step with a non-zero exit code, retried on another node, done.
assert_eq "failed done" "$(es_sql "SELECT group_concat(a.state, ' ') FROM (SELECT a.state FROM attempts a JOIN trials t ON t.id = a.trial
                                    WHERE t.datasets = 'arc_c' ORDER BY a.number) a")" "arc_c's attempts"
read -r ecc_job ecc_step ecc_node < <(es_sql "SELECT a.job_id, a.step_id, a.node FROM attempts a JOIN trials t ON t.id = a.trial
                                              WHERE t.datasets = 'arc_c' AND a.state = 'failed'" | tr '|' ' ')
[ -n "$ecc_step" ] || fail "the failed step of arc_c has no step id"
[ "$(es_sql "SELECT a.node FROM attempts a JOIN trials t ON t.id = a.trial WHERE t.datasets = 'arc_c' AND a.state = 'done'")" != "$ecc_node" ] ||
  fail "arc_c's retry ran on $ecc_node again"

# Slurm's accounting is the witness: every pilot but the cancelled one COMPLETED; one step per
# attempt it ran; the ECC step with its own non-zero exit code.
pilots=$(es_sql "SELECT job_id FROM pilots WHERE evaluation = $id AND job_id IS NOT NULL ORDER BY job_id")
[ -n "$pilots" ] || fail "no pilot jobs"
acct() { sacct -n -P -j "$(echo $pilots | tr ' ' ,)" -o JobID,State,ExitCode 2>/dev/null; }
# Their ends reach slurmdbd through slurmctld's queue.
wait_slurmdbd_ends $pilots
table=$(acct)
echo "$table"
for j in $pilots; do
  state=$(echo "$table" | awk -F'|' -v j="$j" '$1 "" == j "" { print $2 }')
  ran=$(es_sql "SELECT COUNT(*) FROM attempts WHERE job_id = $j AND pilot IS NOT NULL")
  if [ "$ran" = 0 ]; then
    # Asked for while work was left, it found none when it started (released) or never started
    # before the evaluation ended (cancelled while queued).
    echo "pilot $j ran no trial: $state"
  elif [ "$j" = "$victim" ]; then
    assert_contains "$state" CANCELLED "state of the cancelled pilot $j"
  else
    assert_eq COMPLETED "$state" "state of pilot $j"
  fi
  steps=$(grep -cE "^$j\.[0-9]+\|" <<<"$table")
  assert_eq "$ran" "$steps" "steps of pilot $j in sacct"
done
ecc_exit=$(echo "$table" | awk -F'|' -v s="$ecc_job.$ecc_step" '$1 "" == s "" { print $3 }')
[ -n "$ecc_exit" ] && [ "$ecc_exit" != "0:0" ] || fail "the ECC step $ecc_job.$ecc_step has exit code '$ecc_exit' in sacct"
assert_eq COMPLETED "$(echo "$table" | awk -F'|' -v j="$ecc_job" '$1 "" == j "" { print $2 }')" "the pilot whose step failed (it lives on)"

# Cancelling an evaluation releases its pilots (they end COMPLETED) and cancels the trials
# running in them.
id2=$(es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/pilots.toml --name run9)
[ -n "$id2" ] || fail "the second evaluation was not submitted"
deadline=$((SECONDS + 60))
until [ -n "$(es_sql "SELECT a.id FROM attempts a JOIN trials t ON t.id = a.trial WHERE t.evaluation = $id2 AND a.state = 'running' LIMIT 1")" ]; do
  ((SECONDS < deadline)) || fail "no step of evaluation $id2 started"
  sleep 0.2
done
evalsched cancel "$id2" >/dev/null || fail "evalsched cancel $id2 refused"
deadline=$((SECONDS + 60))
until [ "$(es_sql "SELECT COUNT(*) FROM pilots WHERE evaluation = $id2 AND state != 'ended'")" = 0 ]; do
  ((SECONDS < deadline)) || fail "pilots of the cancelled evaluation still open: $(es_sql "SELECT tag, state FROM pilots WHERE evaluation = $id2")"
  sleep 0.5
done
assert_eq 0 "$(es_sql "SELECT COUNT(*) FROM attempts a JOIN trials t ON t.id = a.trial WHERE t.evaluation = $id2 AND a.state = 'running'")" \
  "steps still running after the cancel"
assert_eq 0 "$(es_sql "SELECT COUNT(*) FROM trials WHERE evaluation = $id2 AND state NOT IN ('cancelled', 'done')")" "trials of the cancelled evaluation left"
for j in $(es_sql "SELECT p.job_id FROM pilots p WHERE p.evaluation = $id2 AND p.started_at IS NOT NULL"); do
  deadline=$((SECONDS + 30))
  while [ "$(squeue -h -t all -j "$j" -o %T 2>/dev/null)" = COMPLETING ] && ((SECONDS < deadline)); do sleep 0.5; done
  assert_eq COMPLETED "$(squeue -h -t all -j "$j" -o %T 2>/dev/null)" "state of released pilot job $j"
done
