#!/usr/bin/env bash
# The paper's fault-tolerant loop, done by the cluster: a 2-node --auto-recover=2 --ckpt-dir job
# writes step-1 and step-2 (complete) and step-3 (half-written); its GPU on one node raises
# XID 79 mid-run and the job fails. That node is drained with the reason, the job is requeued and
# runs again on two healthy nodes with ACME_RESUME_CKPT=step-2 and ACME_RESTART_COUNT=1.
. "$(dirname "$0")/lib.sh"

ckpt=$ACME_TEST_TMP/ckpt
runs=$ACME_TEST_TMP/runs.txt
mkdir -p "$ckpt"
# Slurm picks the lowest idle nodes: the first run lands on n1 (and n2); only n1's GPUs fail.
mkdir -p "$ACME_MINICLUSTER_DIR/nvml/scenarios"
cat >"$ACME_MINICLUSTER_DIR/nvml/scenarios/n1.toml" <<'TOML'
[[gpu]]
minor = 0
util = 95
[[gpu]]
minor = 1
util = 95
[[gpu]]
minor = 2
[[gpu]]
minor = 3
[[xid]]
at = 2.0
minor = 0
code = 79
TOML
on_exit 'rm -f "$ACME_MINICLUSTER_DIR/nvml/scenarios/n1.toml"'
# Three idle nodes, so the first run lands on n[1-2].
all_nodes_idle

id=$(submit -N2 --gres=gpu:1 --auto-recover=2 --ckpt-dir="$ckpt" -o "$ACME_TEST_TMP/job.out" --open-mode=append --wrap "
echo \"run restart=\$ACME_RESTART_COUNT resume=\$ACME_RESUME_CKPT nodes=\$SLURM_JOB_NODELIST\" >> $runs
if [ \"\$ACME_RESTART_COUNT\" = 0 ]; then
  for s in 1 2; do mkdir -p $ckpt/step-\$s; echo weights > $ckpt/step-\$s/model.bin; touch $ckpt/step-\$s/.complete; done
  mkdir -p $ckpt/step-3; echo half > $ckpt/step-3/model.bin
  $(until_go "$ACME_TEST_TMP/go")
  echo 'RuntimeError: NCCL communicator was aborted on rank 1' >&2
  exit 1
fi
exit 0")
# The first run fails once n1's sampler has seen the XID (lib.sh, until_go), not 5 s on.
wait_job_state "$id" RUNNING 60 "job $id"
wait_xid_seen "$id" n1
touch "$ACME_TEST_TMP/go"

deadline=$((SECONDS + 120))
while :; do
  state=$(job_field "$id" JobState)
  restarts=$(job_field "$id" Restarts)
  [ "$state" = COMPLETED ] && break
  case $state in FAILED | CANCELLED | TIMEOUT | NODE_FAIL) fail "job $id ended $state after $restarts restarts: $(cat "$runs" 2>/dev/null)" ;; esac
  ((SECONDS < deadline)) || fail "job $id not done in 120 s (state $state, restarts $restarts)"
  sleep 0.5
done

assert_eq 1 "$(job_field "$id" Restarts)" "Slurm's restart count"
assert_eq 2 "$(grep -c '^run ' "$runs")" "runs of the job"
first=$(sed -n 1p "$runs")
second=$(sed -n 2p "$runs")
assert_contains "$first" "restart=0 resume= " "first run (fresh start)"
assert_contains "$first" "nodes=n[1-2]" "first run's nodes"
assert_eq "run restart=1 resume=$ckpt/step-2 nodes=n[2-3]" "$second" "second run"
state=$(sinfo -h -N -n n1 -o '%T|%E')
assert_contains "$state" "drain" "n1's state"
assert_contains "$state" "acme: gpu_lost XID 79 on GPU 0" "n1's drain reason"
assert_eq "1|1" "$(spool_query n1 "SELECT drained || '|' || requeued FROM recoveries WHERE job_id = $id AND restart = 0")" "n1's recovery row"
