#!/usr/bin/env bash
# The node's resident health gate (faultguard(8), HEALTH GATE): once a node ran a GPU job, the
# next jobs' prologs are answered by its resident gate, which records each check as the gate
# process does; a GPU that failed since is still seen, and the gate process drains the node and
# requeues the job as before; a resident gate that was killed is replaced by the next job.
. "$(dirname "$0")/lib.sh"

node=n3
log=$ACME_MINICLUSTER_DIR/log/slurmd-$node.log
sock=$(spool_dir)/run/$node.gate.sock
gpu_job() { submit -N1 -w "$node" --gres=gpu:1 -o /dev/null --wrap true; }

first=$(gpu_job)
assert_eq COMPLETED "$(wait_job "$first" 60)" "job $first"
deadline=$((SECONDS + 120))
until [ -S "$sock" ] || ((SECONDS >= deadline)); do sleep 0.1; done
[ -S "$sock" ] || fail "no resident gate on $node after GPU job $first: $(tail -n 5 "$(spool_dir)/$node.faultguard.log" 2>&1)"
assert_eq "srw------- root" "$(stat -c '%A %U' "$sock")" "the resident gate's socket"

second=$(gpu_job)
assert_eq COMPLETED "$(wait_job "$second" 60)" "job $second"
line=$(grep "ok for job $second " "$log" | tail -n 1)
assert_contains "$line" "; resident)" "job $second's gate line"
assert_eq 1 "$(spool_query "$node" "SELECT passed FROM health_checks WHERE job_id = $second")" "job $second's health check"

# A GPU that fails between jobs: the resident gate sees it (NVML read afresh for each job) and
# the gate process acts on it. -w holds the requeued job to the drained node: it stays pending.
printf '[[gpu]]\nminor = 0\nremap_failure = 1\n[[gpu]]\nminor = 1\nremap_failure = 1\n[[gpu]]\nminor = 2\nremap_failure = 1\n[[gpu]]\nminor = 3\nremap_failure = 1\n' \
  >"$ACME_MINICLUSTER_DIR/nvml/scenarios/$node.toml"
on_exit "rm -f '$ACME_MINICLUSTER_DIR/nvml/scenarios/$node.toml'; scontrol update nodename=$node state=resume >/dev/null 2>&1"
bad=$(gpu_job)
on_exit "scancel $bad >/dev/null 2>&1"
for _ in $(seq 1 200); do
  state=$(sinfo -h -N -n "$node" -o '%T|%E')
  case $state in *drain*) break ;; esac
  sleep 0.3
done
assert_contains "$state" "acme: health gate: GPU" "$node's drain reason"
assert_contains "$state" "row-remap failure" "$node's drain reason"
assert_contains "$(grep "job $bad: resident gate found" "$log" | tail -n 1)" "the gate process decides" "the prolog's line for job $bad"
assert_eq 0 "$(spool_query "$node" "SELECT passed FROM health_checks WHERE job_id = $bad ORDER BY ts DESC LIMIT 1")" "job $bad's health check"
scancel "$bad"
rm -f "$ACME_MINICLUSTER_DIR/nvml/scenarios/$node.toml"
scontrol update nodename="$node" state=resume

# Killed: the next job's prolog finds nobody listening, runs the gate process and starts a new
# resident gate, which answers the job after. A gate logs "serving on" once its socket listens:
# the fourth job is sent when that line's count has grown (a new process alone may not be bound).
serving() {
  local n
  n=$(grep -c -- "--serve on $node: serving on " "$(spool_dir)/$node.faultguard.log" 2>/dev/null)
  echo "${n:-0}"
}
served_before=$(serving)
pkill -f -- "acme-health-gate --serve --node $node --spool $(spool_dir) " || fail "no resident gate process for $node"
third=$(gpu_job)
assert_eq COMPLETED "$(wait_job "$third" 60)" "job $third"
line=$(grep "ok for job $third " "$log" | tail -n 1)
[ -n "$line" ] || fail "no gate line for job $third"
case $line in *resident*) fail "job $third answered by a killed resident gate: $line" ;; esac
# As long as a job may take (wait_job's 60 s): a loaded machine is slow, never wrong.
for _ in $(seq 1 600); do [ "$(serving)" -gt "$served_before" ] && break; sleep 0.1; done
[ "$(serving)" -gt "$served_before" ] ||
  fail "no new resident gate serving on $node after job $third: $(tail -n 5 "$(spool_dir)/$node.faultguard.log" 2>&1)"
fourth=$(gpu_job)
assert_eq COMPLETED "$(wait_job "$fourth" 60)" "job $fourth"
assert_contains "$(grep "ok for job $fourth " "$log" | tail -n 1)" "; resident)" "job $fourth's gate line"
