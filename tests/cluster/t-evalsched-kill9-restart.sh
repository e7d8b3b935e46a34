#!/usr/bin/env bash
# kill -9 of evalschedd at three moments of a run (right after the submission, mid-run, near
# the end), each time restarted: every trial finishes exactly once. Slurm's own job list is the
# witness: one job per trial tag, no tag twice. Beside it runs an evaluation whose sharded and
# bundled datasets are scored by metric jobs: those too run exactly once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/evalsched-lib.sh"
es_setup
es_start
sed -e "s|@FAKE_EVAL@|$ACME_SRC_DIR/scripts/fake-eval|" -e "s|@FAIL_DIR@|$ES/fail|" \
  "$ACME_SRC_DIR"/tests/data/suites/fake-metrics.toml >"$ES"/metrics.toml
chmod 644 "$ES"/metrics.toml
metrics_id=$(es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/metrics.toml --params-b 7 --name run8)
id=$(es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/suite.toml)
done_count() { es_sql "SELECT COUNT(*) FROM trials WHERE evaluation = $id AND state = 'done'"; }
for moment in 0 6 14; do
  while [ "$(done_count)" -lt "$moment" ]; do sleep 0.2; done
  kill -9 "$ES_PID"
  wait "$ES_PID" 2>/dev/null
  echo "killed at $(done_count) done"
  es_start
done
assert_eq done "$(es_wait "$id" 150)" "evaluation state"
assert_eq 20 "$(es_sql "SELECT COUNT(*) FROM results WHERE evaluation = $id")" "scores stored"
# Slurm remembers every job (MinJobAge=300): one per tag, 20 trial tags, and one precursor stage
# job per node the trials ran on (issue 18), each once too.
jobs=$(squeue -h -t all -o '%j' | grep "^evalsched-$(es_sql 'SELECT id FROM instance')-$id-" | sort)
stage_nodes=$(es_sql "SELECT COUNT(DISTINCT a.node) FROM attempts a JOIN trials t ON t.id = a.trial WHERE t.evaluation = $id")
assert_eq "$stage_nodes" "$(es_sql "SELECT COUNT(*) FROM stage_jobs WHERE evaluation = $id")" "stage jobs (one per node with trials)"
assert_eq "$stage_nodes" "$(echo "$jobs" | grep -c -- '-stage[0-9]*$')" "stage jobs in Slurm"
assert_eq $((20 + stage_nodes)) "$(echo "$jobs" | wc -l)" "jobs submitted (20 trials and the stage jobs)"
assert_eq $((20 + stage_nodes)) "$(echo "$jobs" | uniq | wc -l)" "distinct tags"
# The metric evaluation: its trials (shards, one bundle) and two metric jobs, each once.
assert_eq done "$(es_wait "$metrics_id" 90)" "metric evaluation state"
assert_eq 4 "$(es_sql "SELECT COUNT(*) FROM results WHERE evaluation = $metrics_id")" "scores of the metric evaluation"
expected=$(( $(es_sql "SELECT COUNT(*) FROM trials WHERE evaluation = $metrics_id") + 2 + $(es_sql "SELECT COUNT(*) FROM stage_jobs WHERE evaluation = $metrics_id") ))
jobs=$(squeue -h -t all -o '%j' | grep "^evalsched-$(es_sql 'SELECT id FROM instance')-$metrics_id-" | sort)
assert_eq "$expected" "$(echo "$jobs" | wc -l)" "jobs of the metric evaluation (its trials, 2 metric jobs and its stage jobs)"
assert_eq "$expected" "$(echo "$jobs" | uniq | wc -l)" "distinct tags of the metric evaluation"
