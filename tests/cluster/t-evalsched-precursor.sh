#!/usr/bin/env bash
# Precursor staging (issue 18): the checkpoint is copied into each node's cache by one CPU-only
# stage job per (evaluation, node), and the GPU trials placed there depend on it (afterok), so
# no trial holds a GPU while a copy is made. Then a node whose cache cannot be written: its
# stage job fails, is retried once, the trials waiting on it (Slurm: DependencyNeverSatisfied,
# pending forever) are withdrawn and placed again, and the evaluation still ends done; where
# kill_invalid_depend lets slurmctld cancel them instead (whoever sees the failure first), they are placed again the same way.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/evalsched-lib.sh"
es_setup
# Six 1-GPU trials: more than one node's four GPUs, so two nodes get a copy.
es_first_datasets 6 six
es_start
id=$(es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/six.toml)
assert_eq done "$(es_wait "$id" 150)" "the evaluation's state"

trial_nodes=$(es_sql "SELECT DISTINCT a.node FROM attempts a JOIN trials t ON t.id = a.trial WHERE t.evaluation = $id ORDER BY a.node")
stage_nodes=$(es_sql "SELECT node FROM stage_jobs WHERE evaluation = $id AND state = 'done' ORDER BY node")
assert_eq "$trial_nodes" "$stage_nodes" "the nodes with a finished stage job (one per node the trials ran on)"
[ "$(echo "$trial_nodes" | wc -l)" -ge 2 ] || fail "the six trials ran on one node only: $trial_nodes"
assert_eq "$(echo "$trial_nodes" | wc -l)" "$(es_sql "SELECT COUNT(*) FROM stage_jobs WHERE evaluation = $id")" "stage jobs (one per node, none retried)"

for sid in $(es_sql "SELECT job_id FROM stage_jobs WHERE evaluation = $id"); do
  snode=$(job_field "$sid" NodeList)
  # scontrol prints AllocTRES from Slurm 23.02 on (22.05: TRES).
  tres=$(job_field "$sid" AllocTRES)
  [ -n "$tres" ] || tres=$(job_field "$sid" TRES)
  [ -n "$tres" ] || fail "slurmctld forgot stage job $sid"
  case $tres in *gpu*) fail "stage job $sid on $snode held GPUs: TRES=$tres" ;; esac
  send=$(job_field "$sid" EndTime)
  # Every trial on that node depended on it and started after it ended.
  for tid in $(es_sql "SELECT a.job_id FROM attempts a JOIN trials t ON t.id = a.trial WHERE t.evaluation = $id AND a.node = '$snode'"); do
    grep -q "job $tid on $snode with --time [0-9]* after afterok:$sid\$" "$ES"/daemon.log ||
      fail "trial job $tid on $snode was not submitted after afterok:$sid: $(grep "job $tid " "$ES"/daemon.log)"
    tstart=$(job_field "$tid" StartTime)
    [[ ! "$tstart" < "$send" ]] || fail "trial job $tid started at $tstart, before stage job $sid ended at $send"
  done
done

# The copy happened once per node, by the stage job: no trial's stage.json says it copied.
copied_by_trials=$(cd "$ES"/results && grep -l '"copied": 1' $(find . -name stage.json) | grep -v -- '-stage[0-9]*/' || true)
assert_eq "" "$copied_by_trials" "trials that copied the checkpoint themselves"
assert_eq "$(echo "$trial_nodes" | wc -l)" "$(es_sql "SELECT COUNT(*) FROM stagings WHERE evaluation = $id AND copied = 1")" "copies from shared storage"

# A node whose cache cannot be written (a file where the node's cache directory belongs).
mkdir -p "$ES"/ckpt/run7/step-200
cp "$ES"/ckpt/run7/step-100/model.bin "$ES"/ckpt/run7/step-200/
chmod -R a+rX "$ES"/ckpt/run7/step-200
cache=$ES/stage/evalsched-$(id -un)
mv "$cache"/n1 "$cache"/n1.was
: >"$cache"/n1
es_first_datasets 2 two
id2=$(es_submit "$ES"/ckpt/run7/step-200 --suite "$ES"/two.toml)
assert_eq done "$(es_wait "$id2" 200)" "the state of an evaluation whose first node cannot stage"
assert_eq "failed failed" "$(es_sql "SELECT group_concat(state, ' ') FROM (SELECT state FROM stage_jobs WHERE evaluation = $id2 AND node = 'n1' ORDER BY number)")" \
  "the stage job on n1 and its one retry"
grep -q "waited on a stage job that failed; cancelled, placed again" "$ES"/daemon.log ||
  fail "no trial was withdrawn from the failed stage job: $(grep -i stage "$ES"/daemon.log | tail -20)"
assert_eq "" "$(squeue -h -t PD -o '%i %r' | grep -i dependency)" "jobs left pending on a dependency"

# The same at a site that sets SchedulerParameters=kill_invalid_depend: slurmctld cancels the
# dependents itself when the stage job fails. They are placed again like withdrawn ones, and
# the cancelled try is not counted (no attempt row keeps its job). slurm.conf is restored
# (and re-read) on the way out.
conf=${SLURM_CONF:-$ACME_MINICLUSTER_DIR/etc/slurm.conf}
cp "$conf" "$ACME_TEST_TMP/slurm.conf.orig"
on_exit 'cp "$ACME_TEST_TMP/slurm.conf.orig" "$conf"; scontrol reconfigure >/dev/null 2>&1'
sed -i '/^SchedulerParameters=/s/$/,kill_invalid_depend/' "$conf"
scontrol reconfigure || fail "scontrol reconfigure (kill_invalid_depend) failed"
grep -q 'SchedulerParameters.*kill_invalid_depend' <<<"$(scontrol show config)" || fail "slurmctld did not take kill_invalid_depend"
mkdir -p "$ES"/ckpt/run7/step-300
cp "$ES"/ckpt/run7/step-100/model.bin "$ES"/ckpt/run7/step-300/
chmod -R a+rX "$ES"/ckpt/run7/step-300
# n1 alone until its stage job has failed: where the trials go first is the scheduler's choice
# (on 26.05 it chose n2, n1 being still busy with the cancelled jobs), and this part needs n1.
others=$(sinfo -h -N -o '%N' | sort -u | grep -vx n1 | paste -sd, -)
if [ -n "$others" ]; then
  scontrol update nodename="$others" state=drain reason="t-evalsched-precursor: n1 alone for a moment" ||
    fail "draining $others"
  on_exit "scontrol update nodename=$others state=resume >/dev/null 2>&1"
fi
id3=$(es_submit "$ES"/ckpt/run7/step-300 --suite "$ES"/two.toml)
for _ in $(seq 1 120); do
  grep -q -e 'was cancelled by slurmctld (its stage job failed' -e 'step-300/[a-z]* attempt [0-9]*: job [0-9]* waited on a stage job that failed' \
    "$ES"/daemon.log && break
  sleep 0.5
done
[ -z "$others" ] || scontrol update nodename="$others" state=resume || fail "resuming $others"
assert_eq done "$(es_wait "$id3" 200)" "the state of an evaluation whose first node cannot stage (kill_invalid_depend)"
# Whoever sees the failed stage job first cancels the dependents: slurmctld (kill_invalid_depend)
# or the daemon's own round; either way the job is withdrawn, not counted.
withdrawn=$(sed -n -e 's/.*: job \([0-9]*\) was cancelled by slurmctld (its stage job failed.*/\1/p' \
  -e 's/.*trial run7\/step-300\/[a-z]* attempt [0-9]*: job \([0-9]*\) waited on a stage job that failed.*/\1/p' "$ES"/daemon.log | paste -sd, -)
[ -n "$withdrawn" ] || fail "no trial waiting on n1's failed stage job was withdrawn: $(grep -i -e stage -e cancel "$ES"/daemon.log | tail -20)"
for j in ${withdrawn//,/ }; do
  assert_eq "CANCELLED" "$(sacct -n -X -P -j "$j" -o State | head -1 | cut -d' ' -f1)" "the state sacct shows for withdrawn job $j"
done
assert_eq 0 "$(es_sql "SELECT COUNT(*) FROM attempts WHERE job_id IN ($withdrawn)")" "attempts counted for withdrawn jobs ($withdrawn)"
assert_eq "done done" "$(es_sql "SELECT group_concat(state, ' ') FROM trials WHERE evaluation = $id3")" "the trials' states"
rm -f "$cache"/n1
mv "$cache"/n1.was "$cache"/n1
exit 0
