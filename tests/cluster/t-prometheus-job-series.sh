#!/usr/bin/env bash
# A running 2-node traced job is in the site's Prometheus: node_exporter's textfile collector on
# each node serves the sampler's DCGM-named series, one per GPU of the job, labelled by node and GPU,
# and one acme_job_gpu_info series per GPU that names the job (queries join on Hostname and gpu);
# when the job ends the series go stale, and the spool holds the last scraped values. The next job
# on the same GPUs continues the same GPU series: Prometheus' series grow with GPUs, not jobs.
. "$(dirname "$0")/lib.sh"
need_prometheus

# Each GPU busy at its own level (minor 0: 20 %, minor 1: 35 %, ...), so a series that carries
# another GPU's numbers shows.
gpus=$(cat "$ACME_MINICLUSTER_DIR/gpus")
text=""
for ((g = 0; g < gpus; g++)); do
  text+=$(printf '[[gpu]]\nminor = %d\nutil = %d\npower_mw = %d\n' "$g" $((20 + 15 * g)) $((100000 + 10000 * g)))$'\n'
done
use_scenario <<<"$text"

# Each job runs until the test has seen what it looks for while the job runs, and is then let go
# (at most 5 minutes): a job of fixed length ended under load before its series were scraped,
# and the energy query then found the job's info series gone ("expected '4', got ''").
hold=$ACME_TEST_TMP/hold
printf '#!/bin/sh\n# until $1 exists, at most 5 minutes\ni=0\nwhile [ ! -e "$1" ] && [ $i -lt 1500 ]; do sleep 0.2; i=$((i + 1)); done\n' >"$hold"
chmod 755 "$hold"
out=$ACME_TEST_TMP/job.out
id=$(submit -N2 --gres=gpu:2 --gpu-telemetry=1 -o "$out" --wrap "srun -N2 $hold $ACME_TEST_TMP/release-1")
wait_job_state "$id" RUNNING 120 "job $id"
mapfile -t nodes < <(job_nodes "$id")
# The GPU series of this job: joined to the job's info series.
of_job() { # metric [selector]
  echo "$1{${2:-}} * on(Hostname, gpu) group_left(hpc_job, user) acme_job_gpu_info{hpc_job=\"$id\"}"
}
[ "${#nodes[@]}" -eq 2 ] || fail "job $id runs on ${nodes[*]}, not on 2 nodes"

# The job's utilisation series (Hostname|gpu|value lines), waited for: the sampler's first ticks
# and a scrape or two.
expect_util_series() { # want what
  local got="" deadline=$((SECONDS + 120))
  while ((SECONDS < deadline)); do
    got=$(prom_query "$(of_job DCGM_FI_DEV_GPU_UTIL)" Hostname gpu)
    [ "$got" = "$1" ] && break
    sleep 0.5
  done
  assert_eq "$1" "$got" "Prometheus' DCGM_FI_DEV_GPU_UTIL series of $2 (Hostname|gpu|value)"
}

# Four series (2 nodes x 2 GPUs).
want=""
for n in "${nodes[@]}"; do want+="$n|0|20"$'\n'"$n|1|35"$'\n'; done
expect_util_series "${want%$'\n'}" "job $id"
user=$(job_field "$id" UserId)
assert_eq "${user%%(*}" "$(prom_query "count by (user) ($(of_job DCGM_FI_DEV_GPU_UTIL))" user | cut -d'|' -f1)" "user label"
# The job is not on the GPU series themselves (it would make new series for every job).
assert_eq "" "$(prom_query "DCGM_FI_DEV_GPU_UTIL{hpc_job!=\"\"}" Hostname gpu)" "GPU series labelled with a job"
# Power in W, and the energy counter is there per GPU.
assert_eq "$(printf '%s|0|100\n%s|1|110' "${nodes[0]}" "${nodes[0]}")" \
  "$(prom_query "$(of_job DCGM_FI_DEV_POWER_USAGE "Hostname=\"${nodes[0]}\"")" Hostname gpu)" "power series"
assert_eq 4 "$(prom_query "count($(of_job DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION))" | cut -d'|' -f1)" "energy counters"
touch "$ACME_TEST_TMP/release-1"

assert_eq COMPLETED "$(wait_job "$id" 60)" "job $id state"
# The textfiles went with the job: Prometheus marks the series stale at its next scrapes.
stale=""
deadline=$((SECONDS + 120))
while ((SECONDS < deadline)); do
  stale=$(prom_query "acme_job_gpu_info{hpc_job=\"$id\"}" Hostname gpu)
  [ -z "$stale" ] && break
  sleep 0.5
done
assert_eq "" "$stale" "info series of job $id after it ended"

# The spool's newest sample of each GPU has what Prometheus scraped last; the energy counter
# Prometheus saw last is one the spool recorded.
for n in "${nodes[@]}"; do
  for g in 0 1; do
    last=$(prom_query "last_over_time(($(of_job DCGM_FI_DEV_GPU_UTIL "Hostname=\"$n\",gpu=\"$g\""))[5m:1s])" | cut -d'|' -f1)
    spool=$(spool_query "$n" "SELECT printf('%g', util_gpu) FROM gpu_samples WHERE job_id = $id AND gpu = $g ORDER BY ts DESC LIMIT 1")
    assert_eq "$spool" "$last" "$n GPU $g: last scraped utilisation vs the spool's newest sample"
    energy=$(prom_query "last_over_time(($(of_job DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION "Hostname=\"$n\",gpu=\"$g\""))[5m:1s])" | cut -d'|' -f1)
    [ -n "$energy" ] || fail "$n GPU $g: no energy counter was scraped"
    assert_eq 1 "$(spool_query "$n" "SELECT COUNT(*) FROM gpu_samples WHERE job_id = $id AND gpu = $g AND energy_mj = CAST($energy AS INTEGER) LIMIT 1")" \
      "$n GPU $g: the spool has a sample with the scraped energy counter $energy mJ"
  done
done

# A second job on the first node's same two GPUs: its info series is new, its GPU series are the
# first job's (the same labels), so the node's GPU series over both jobs are still two.
first=$id
id=$(submit -N1 -w "${nodes[0]}" --gres=gpu:2 --gpu-telemetry=1 -o "$ACME_TEST_TMP/second.out" --wrap "$hold $ACME_TEST_TMP/release-2")
expect_util_series "${nodes[0]}|0|20"$'\n'"${nodes[0]}|1|35" "job $id after job $first"
assert_eq 2 "$(prom_query "count(count_over_time(DCGM_FI_DEV_GPU_UTIL{Hostname=\"${nodes[0]}\",gpu=~\"0|1\"}[10m]))" | cut -d'|' -f1)" \
  "GPU utilisation series of ${nodes[0]} GPUs 0 and 1 over jobs $first and $id"
touch "$ACME_TEST_TMP/release-2"
assert_eq COMPLETED "$(wait_job "$id" 60)" "job $id state"
