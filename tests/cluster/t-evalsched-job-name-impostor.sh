#!/usr/bin/env bash
# Another user submits jobs named like the victim's trials (job names are anyone's to pick),
# with the daemon's comment token forged too: one right after the victim's real job (the
# daemon must not wait for it instead), one in the state a daemon crash leaves (the trial
# marked 'submitting', no job yet) before a restart (the daemon must not adopt it). The
# victim's evaluations still complete, and no impostor job is adopted or cancelled.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/evalsched-lib.sh"
impostor=$(test_user)
es_setup
es_start
inst=$(es_sql 'SELECT id FROM instance')
# As the impostor: a long CPU job named TAG, its comment what evalschedd writes for TAG.
squat() { # tag
  runuser -u "$impostor" -- sbatch --parsable --job-name="$1" --comment="evalsched trial x evalsched-job=$1" \
    --chdir=/tmp --output=/dev/null -n1 -t 10 --wrap 'sleep 600' 2>&1 || fail "the impostor's sbatch was refused"
}
impostor_state() { squeue -h -t all -j "$1" -o %T 2>/dev/null; }

cat >"$ES"/two.toml <<TOML
[suite]
name = "two"
command = "$ACME_SRC_DIR/scripts/fake-eval --checkpoint {checkpoint} --task {dataset} --out {output} --fail-dir $ES/fail"
gpus = 1
[[dataset]]
name = "mmlu"
kind = "multiple_choice"
prior = "5s"
[[dataset]]
name = "cmmlu"
kind = "multiple_choice"
prior = "5s"
TOML
chmod 644 "$ES"/two.toml

# 1. A copy of the victim's running trial, newer than it: the trial is judged by its own job.
id=$(es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/two.toml --name run7)
tag=
deadline=$((SECONDS + 120))
while ((SECONDS < deadline)); do
  tag=$(squeue -h -u root -o %j | grep "^evalsched-$inst-$id-" | head -n 1)
  [ -n "$tag" ] && break
  sleep 0.2
done
[ -n "$tag" ] || fail "no job of evaluation $id appeared"
copy=$(squat "$tag")
assert_eq done "$(es_wait "$id" 90)" "the victim's evaluation with an impostor beside its trial"
assert_eq 2 "$(es_sql "SELECT COUNT(*) FROM results WHERE evaluation = $id")" "scores stored"
case $(impostor_state "$copy") in PENDING | RUNNING) ;; *) fail "the impostor's job $copy was touched: $(impostor_state "$copy")" ;; esac

# 2. After a crash between marking a trial 'submitting' and submitting it, an impostor's job
# carries the trial's tag: a restart must submit the trial again, not adopt that job.
# Nodes drained first, so the trials stay pending while the crash state is arranged.
nodes=$(sinfo -h -N -o %N | sort -u | paste -sd,)
on_exit 'scontrol update nodename="$nodes" state=resume >/dev/null 2>&1'
scontrol update nodename="$nodes" state=drain reason=impostor-test || fail "cannot drain $nodes"
id2=$(es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/two.toml --name run9)
sleep 2
kill -9 "$ES_PID"
wait "$ES_PID" 2>/dev/null
trial=$(es_sql "SELECT id FROM trials WHERE evaluation = $id2 AND state = 'pending' ORDER BY id LIMIT 1")
[ -n "$trial" ] || fail "evaluation $id2 has no pending trial with every node drained"
tag2="evalsched-$inst-$id2-$trial-1"
es_sql "INSERT INTO attempts (trial, number, tag, node, time_limit_s, state, submitted_at) VALUES ($trial, 1, '$tag2', 'n1', 600, 'submitting', 0);
        UPDATE trials SET state = 'submitting', attempts = 1 WHERE id = $trial"
squatter=$(squat "$tag2")
scontrol update nodename="$nodes" state=resume || fail "cannot resume $nodes"
es_start
assert_eq done "$(es_wait "$id2" 90)" "the victim's evaluation after a restart beside an impostor"
grep -q "adopted job $squatter" "$ES"/daemon.log && fail "the daemon adopted the impostor's job $squatter"
assert_contains "$(grep "no job tagged $tag2" "$ES"/daemon.log)" "submitting it again" "the restart's decision"
assert_eq 1 "$(squeue -h -t all -u root -o %j | grep -c "^$tag2\$")" "the victim's own job for $tag2"
case $(impostor_state "$squatter") in PENDING | RUNNING) ;; *) fail "the impostor's job $squatter was touched: $(impostor_state "$squatter")" ;; esac
exit 0
