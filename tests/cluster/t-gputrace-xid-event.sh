#!/usr/bin/env bash
# An XID injected on one of the job's GPUs lands in gpu_events with the job and the GPU.
. "$(dirname "$0")/lib.sh"

use_scenario <<'TOML'
[[gpu]]
minor = 0
util = 90
[[gpu]]
minor = 1
util = 90
[[gpu]]
minor = 2
util = 90
[[gpu]]
minor = 3
util = 90
[[xid]]
at = 1.0
minor = 0
code = 13
[[xid]]
at = 1.0
minor = 1
code = 13
[[xid]]
at = 1.0
minor = 2
code = 13
[[xid]]
at = 1.0
minor = 3
code = 13
TOML

out=$ACME_TEST_TMP/job.out
id=$(submit -N1 --gres=gpu:1 --gpu-telemetry=1 -o "$out" --wrap 'echo $SLURM_JOB_GPUS; sleep 4')
assert_eq COMPLETED "$(wait_job "$id" 60)" "job $id state"
node=$(job_nodes "$id")
gpu=$(head -n 1 "$out")
events=$(spool_query "$node" "SELECT gpu || ':' || kind || ':' || code FROM gpu_events WHERE job_id = $id")
# Only the job's own GPU is watched: one XID, on that GPU.
assert_eq "$gpu:xid:13" "$events" "XID events of job $id on $node"
assert_eq 1 "$(spool_query "$node" "SELECT xids FROM gpu_summaries WHERE job_id = $id AND gpu = $gpu")" "summary XID count"
