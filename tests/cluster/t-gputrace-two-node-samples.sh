#!/usr/bin/env bash
# A 2-node `sbatch --gres=gpu:2 --gpu-telemetry=1` job that runs 5 s leaves samples for exactly
# its 2 GPUs on each node, with the scenario's values (read by minor number, not NVML index),
# one summary row per GPU, and no sampler afterwards.
. "$(dirname "$0")/lib.sh"

# NVML enumerates minors 3,2,1,0; GPU id g has utilisation 10*(g+1) and 1000*(g+1) bytes used.
use_scenario <<'TOML'
[[gpu]]
minor = 3
util = 40
mem_used = 4000
power_mw = 400000
[[gpu]]
minor = 2
util = 30
mem_used = 3000
power_mw = 300000
[[gpu]]
minor = 1
util = 20
mem_used = 2000
power_mw = 200000
[[gpu]]
minor = 0
util = 10
mem_used = 1000
power_mw = 100000
TOML

out=$ACME_TEST_TMP/job.out
# The job runs 5 s, and on until each of its GPUs has 4 samples (lib.sh, until_go): its samplers
# start at background priority once the job runs, late on a loaded node.
go=$ACME_TEST_TMP/go
id=$(submit -N2 --gres=gpu:2 --gpu-telemetry=1 -o "$out" --wrap 'srun -l bash -c "echo \$SLURMD_NODENAME \$SLURM_JOB_GPUS"; sleep 5; '"$(until_go "$go")")
wait_job_state "$id" RUNNING 60 "job $id"
deadline=$((SECONDS + $(wait_floor 60)))
for node in $(job_nodes "$id"); do
  until [ "$(spool_query "$node" "SELECT COUNT(*) FROM (SELECT gpu FROM gpu_samples WHERE job_id = $id GROUP BY gpu HAVING COUNT(*) >= 4)" 2>/dev/null)" = 2 ]; do
    ((SECONDS < deadline)) || fail "job $id: its 2 GPUs on $node not sampled 4 times each in $(wait_floor 60) s: $(spool_query "$node" "SELECT gpu, COUNT(*) FROM gpu_samples WHERE job_id = $id GROUP BY gpu" | paste -sd' ')"
    sleep 0.3
  done
done
touch "$go"
assert_eq COMPLETED "$(wait_job "$id" 90)" "job $id state"
assert_no_sampler "$id"

for node in $(job_nodes "$id"); do
  gpus=$(awk -v n="$node" '$2 == n {print $3}' "$out")
  [ -n "$gpus" ] || fail "no GPU list for $node in $(cat "$out")"
  expected_ids=$(tr ',' '\n' <<<"$gpus" | sort -n | paste -sd' ')
  seen_ids=$(spool_query "$node" "SELECT DISTINCT gpu FROM gpu_samples WHERE job_id = $id ORDER BY gpu" | paste -sd' ')
  assert_eq "$expected_ids" "$seen_ids" "GPUs sampled on $node"
  for g in $(tr ',' ' ' <<<"$gpus"); do
    n=$(spool_query "$node" "SELECT COUNT(*) FROM gpu_samples WHERE job_id = $id AND gpu = $g")
    [ "$n" -ge 4 ] || fail "only $n samples for GPU $g on $node in a 5 s job at 1 s"
    values=$(spool_query "$node" "SELECT DISTINCT util_gpu || '/' || mem_used FROM gpu_samples WHERE job_id = $id AND gpu = $g")
    assert_eq "$((10 * (g + 1))).0/$((1000 * (g + 1)))" "$values" "utilisation/memory of GPU $g on $node"
    summary=$(spool_query "$node" "SELECT COUNT(*), MAX(util_max), MAX(mem_max), MAX(energy_mj) > 0, MAX(verdict) FROM gpu_summaries WHERE job_id = $id AND gpu = $g")
    want_verdict=low-util
    [ $((10 * (g + 1))) -ge 30 ] && want_verdict=ok
    assert_eq "1|$((10 * (g + 1))).0|$((1000 * (g + 1)))|1|$want_verdict" "$summary" "summary of GPU $g on $node"
  done
  rows=$(spool_query "$node" "SELECT COUNT(*) FROM gpu_summaries WHERE job_id = $id")
  assert_eq 2 "$rows" "summary rows on $node"
done
