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
grep -q 'ran on n1' <<<"$(grep -h 'ran on' "$ACME_TEST_TMP"/job*.out)" && fail "a job ran on the faulty n1: $(cat "$ACME_TEST_TMP"/job*.out)"
restarted=0
for id in "${ids[@]}"; do [ "$(job_field "$id" Restarts)" = 1 ] && restarted=$((restarted + 1)); done
assert_eq 1 "$restarted" "jobs requeued by the gate"
state=$(sinfo -h -N -n n1 -o '%T|%E')
assert_contains "$state" "drain" "n1's state"
assert_contains "$state" "acme: health gate: GPU" "n1's drain reason"
assert_contains "$state" "row-remap failure" "n1's drain reason"
assert_eq 0 "$(spool_query n1 "SELECT passed FROM health_checks ORDER BY ts DESC LIMIT 1")" "n1's last health check"

# The GPU count slurmctld promised is kept between gates (faultguard(8)); a node whose NVML then
# shows fewer GPUs is not passed on the kept count: slurmctld is asked again and the node fails.
[ -f "$(spool_dir)/run/n2.gpus" ] || fail "no kept GPU count for n2 after its gates passed"
again=$(submit -N1 -w n2 --gres=gpu:1 -o /dev/null --wrap 'true')
assert_eq COMPLETED "$(wait_job "$again" 60)" "job $again on n2"
line=$(grep "ok for job $again " "$ACME_MINICLUSTER_DIR/log/slurmd-n2.log" | tail -n 1)
assert_contains "$line" "kept" "n2's gate with a kept count (no slurmctld round trip)"
gpus=$(cat "$ACME_MINICLUSTER_DIR/gpus" 2>/dev/null || echo 4)
for ((g = 0; g < gpus - 1; g++)); do printf '[[gpu]]\nminor = %d\n' "$g"; done >"$ACME_MINICLUSTER_DIR/nvml/scenarios/n2.toml"
on_exit 'rm -f "$ACME_MINICLUSTER_DIR/nvml/scenarios/n2.toml"; scontrol update nodename=n2 state=resume >/dev/null 2>&1'
short=$(submit -N1 -w n2 --gres=gpu:1 -o /dev/null --wrap 'true')
on_exit "scancel $short >/dev/null 2>&1"
for _ in $(seq 1 200); do
  state=$(sinfo -h -N -n n2 -o '%T|%E')
  case $state in *drain*) break ;; esac
  sleep 0.3
done
assert_contains "$state" "NVML shows $((gpus - 1)) GPUs, Slurm promises $gpus" "n2's drain reason after losing a GPU"
