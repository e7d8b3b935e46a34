#!/usr/bin/env bash
# With textfile_dir=DIR/%n (the minicluster's), a traced job's GPUs appear as DCGM-named Prometheus series in
# DIR/NODE/acme-gputrace-JOB.prom while it runs, labelled with the job, user and node; the file
# goes when the job ends, and the epilog removes it when the sampler was killed.
. "$(dirname "$0")/lib.sh"

use_uniform_scenario 70 31 1.0
# The minicluster's plugstack names textfile_dir=$ACME_MINICLUSTER_DIR/textfile/%n, the
# directory each node's node_exporter reads.
textfile=$ACME_MINICLUSTER_DIR/textfile
grep -q "gputrace.so .*textfile_dir=$textfile/%n" "$ACME_MINICLUSTER_DIR/etc/plugstack.conf" ||
  fail "the minicluster's plugstack.conf has no textfile_dir=$textfile/%n"

wait_file() { # path timeout_s
  local deadline=$((SECONDS + $2))
  while ((SECONDS < deadline)); do
    [ -s "$1" ] && grep -q '^DCGM_FI_DEV_XID_ERRORS{.*} 31$' "$1" && return 0
    sleep 0.2
  done
  fail "$1 did not appear with the XID within $2 s: $(ls -la "$(dirname "$1")" 2>&1)"
}

out=$ACME_TEST_TMP/job.out
# Each job runs until the test has looked at its file (touch $go; at most 5 minutes), not for a
# fixed time a loaded node's sampler might not have written the file in.
go=$ACME_TEST_TMP/go
id=$(submit -N1 --gres=gpu:1 --gpu-telemetry=1 -o "$out" --wrap "echo \$SLURM_JOB_GPUS; $(until_go "$go")")
deadline=$((SECONDS + 120))
until [ -s "$out" ]; do
  ((SECONDS < deadline)) || fail "job $id wrote no GPU to $out within 120 s: $(job_field "$id" JobState)"
  sleep 0.2
done
node=$(job_nodes "$id")
gpu=$(head -n 1 "$out")
prom=$textfile/$node/acme-gputrace-$id.prom
wait_file "$prom" 120
text=$(cat "$prom")
user=$(job_field "$id" UserId)
user=${user%%(*}
assert_contains "$text" "# TYPE DCGM_FI_DEV_GPU_UTIL gauge" "$prom"
assert_contains "$text" "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter" "$prom"
assert_contains "$text" "DCGM_FI_DEV_GPU_UTIL{gpu=\"$gpu\",UUID=\"GPU-" "$prom"
labels=",device=\"nvidia$gpu\",modelName=\""
assert_contains "$text" "$labels" "$prom"
assert_contains "$text" "\",Hostname=\"$node\"} 70" "$prom"
# The job is on the info series, not on the GPU series (gputrace(8): they would churn).
assert_contains "$text" "acme_job_gpu_info{hpc_job=\"$id\",user=\"$user\",Hostname=\"$node\",gpu=\"$gpu\"} 1" "$prom"
assert_eq 0 "$(grep -c '^DCGM_FI_DEV_GPU_UTIL{.*hpc_job=' "$prom")" "GPU_UTIL series labelled with the job in $prom"
assert_contains "$text" "acme_gpu_xid_events_total{gpu=\"$gpu\"" "$prom"
# Only the job's GPU: one GPU's series.
assert_eq 1 "$(grep -c '^DCGM_FI_DEV_GPU_UTIL{' "$prom")" "GPU_UTIL series in $prom"
# node_exporter reads only *.prom: the job's file is the only one (the writer's other file is
# dot-named, not *.prom).
assert_eq "acme-gputrace-$id.prom" "$(cd "$textfile/$node" && ls -- *.prom)" "*.prom files in $textfile/$node"
touch "$go"
assert_eq COMPLETED "$(wait_job "$id" 60)" "job $id state"
rm -f "$go"
[ ! -e "$prom" ] || fail "$prom is still there after job $id ended"
assert_eq "" "$(ls -A "$textfile/$node")" "files left in $textfile/$node after job $id"

# A sampler killed outright cannot clean up: the epilog does.
id2=$(submit -N1 -w "$node" --gres=gpu:1 --gpu-telemetry=1 -o /dev/null --wrap "$(until_go "$go")")
prom2=$textfile/$node/acme-gputrace-$id2.prom
wait_file "$prom2" 120
pid=$(pgrep -f "acme-gpu-sampler --job $id2 .*--spool $(spool_dir) " | head -n 1)
[ -n "$pid" ] || fail "no sampler of job $id2 running"
kill -9 "$pid"
touch "$go"
assert_eq COMPLETED "$(wait_job "$id2" 60)" "job $id2 state"
[ ! -e "$prom2" ] || fail "$prom2 is still there after the epilog of job $id2 (its sampler was killed)"
assert_eq "" "$(ls -A "$textfile/$node")" "files left in $textfile/$node after the epilog of job $id2"
