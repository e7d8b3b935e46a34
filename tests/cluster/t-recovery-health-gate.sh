#!/usr/bin/env bash
# A node whose GPU reports a row-remap failure is drained by the pre-job gate with the reason,
# and the job that landed there runs on another node.
. "$(dirname "$0")/lib.sh"

mkdir -p "$ACME_MINICLUSTER_DIR/nvml/scenarios"
printf '[[gpu]]\nminor = 0\nremap_failure = 1\n[[gpu]]\nminor = 1\nremap_failure = 1\n[[gpu]]\nminor = 2\nremap_failure = 1\n[[gpu]]\nminor = 3\nremap_failure = 1\n' \
  >"$ACME_MINICLUSTER_DIR/nvml/scenarios/n1.toml"
on_exit 'rm -f "$ACME_MINICLUSTER_DIR/nvml/scenarios/n1.toml"'

# Three whole-node jobs at once: one lands on n1.
ids=()
for i in 1 2 3; do
  ids+=("$(submit -N1 --gres=gpu:4 -o "$ACME_TEST_TMP/job$i.out" --wrap 'echo ran on $SLURMD_NODENAME; sleep 2')")
done
for id in "${ids[@]}"; do
  assert_eq COMPLETED "$(wait_job "$id" 120)" "job $id"
  assert_contains "$(cat "$ACME_TEST_TMP"/job*.out)" "ran on" "job outputs"
done
grep -h 'ran on' "$ACME_TEST_TMP"/job*.out | grep -q 'ran on n1' && fail "a job ran on the faulty n1: $(cat "$ACME_TEST_TMP"/job*.out)"
restarted=0
for id in "${ids[@]}"; do [ "$(job_field "$id" Restarts)" = 1 ] && restarted=$((restarted + 1)); done
assert_eq 1 "$restarted" "jobs requeued by the gate"
state=$(sinfo -h -N -n n1 -o '%T|%E')
assert_contains "$state" "drain" "n1's state"
assert_contains "$state" "acme: health gate: GPU" "n1's drain reason"
assert_contains "$state" "row-remap failure" "n1's drain reason"
assert_eq 0 "$(spool_query n1 "SELECT passed FROM health_checks ORDER BY ts DESC LIMIT 1")" "n1's last health check"
