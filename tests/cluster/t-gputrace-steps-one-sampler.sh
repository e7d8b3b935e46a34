#!/usr/bin/env bash
# A job with 3 srun steps still has exactly one sampler per node, and none once it ends.
. "$(dirname "$0")/lib.sh"

out=$ACME_TEST_TMP/job.out
id=$(submit -N2 --gres=gpu:1 --gpu-telemetry=1 -o "$out" --wrap 'for i in 1 2 3; do srun -N2 sleep 1; done; sleep 1')
# Watch while it runs: count this job's samplers.
max=0
while state=$(job_field "$id" JobState); [ "$state" = PENDING ] || [ "$state" = RUNNING ] || [ "$state" = CONFIGURING ]; do
  n=$(pgrep -fc "acme-gpu-sampler --job $id .*--spool $(spool_dir) " || true)
  [ "$n" -gt "$max" ] && max=$n
  sleep 0.2
done
assert_eq COMPLETED "$(wait_job "$id" 60)" "job $id state"
assert_eq 2 "$max" "samplers seen at once for a 2-node job with 3 steps"
assert_no_sampler "$id"
for node in $(job_nodes "$id"); do
  assert_eq 1 "$(spool_query "$node" "SELECT COUNT(*) FROM jobs WHERE job_id = $id")" "job rows on $node"
done
