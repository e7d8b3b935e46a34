#!/usr/bin/env bash
# An XID injected on one of the job's GPUs lands in gpu_events with the job and the GPU.
. "$(dirname "$0")/lib.sh"

use_uniform_scenario 90 13

out=$ACME_TEST_TMP/job.out
# The job runs until its sampler has seen the XID (lib.sh, until_go), not 4 s.
go=$ACME_TEST_TMP/go
id=$(submit -N1 --gres=gpu:1 --gpu-telemetry=1 -o "$out" --wrap "echo \$SLURM_JOB_GPUS; $(until_go "$go")")
wait_job_state "$id" RUNNING 60 "job $id"
node=$(job_nodes "$id")
wait_xid_seen "$id" "$node"
touch "$go"
assert_eq COMPLETED "$(wait_job "$id" 60)" "job $id state"
gpu=$(head -n 1 "$out")
events=$(spool_query "$node" "SELECT gpu || ':' || kind || ':' || code FROM gpu_events WHERE job_id = $id")
# Only the job's own GPU is watched: one XID, on that GPU.
assert_eq "$gpu:xid:13" "$events" "XID events of job $id on $node"
assert_eq 1 "$(spool_query "$node" "SELECT xids FROM gpu_summaries WHERE job_id = $id AND gpu = $gpu")" "summary XID count"
