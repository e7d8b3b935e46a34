#!/usr/bin/env bash
# A running 2-node traced job is in the site's Prometheus: node_exporter's textfile collector on
# each node serves the sampler's DCGM-named series, one per GPU of the job, labelled with the job
# id and node; when the job ends the series go stale, and the spool holds the last scraped values.
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

out=$ACME_TEST_TMP/job.out
id=$(submit -N2 --gres=gpu:2 --gpu-telemetry=1 -o "$out" --wrap 'srun -N2 sleep 14')
for _ in $(seq 1 100); do
  [ "$(job_field "$id" JobState)" = RUNNING ] && break
  sleep 0.2
done
mapfile -t nodes < <(job_nodes "$id")
[ "${#nodes[@]}" -eq 2 ] || fail "job $id runs on ${nodes[*]}, not on 2 nodes"

# Four series (2 nodes x 2 GPUs) within the sampler's first ticks and a scrape or two.
want=""
for n in "${nodes[@]}"; do want+="$n|0|20"$'\n'"$n|1|35"$'\n'; done
want=${want%$'\n'}
got=""
for _ in $(seq 1 60); do
  got=$(prom_query "DCGM_FI_DEV_GPU_UTIL{hpc_job=\"$id\"}" Hostname gpu)
  [ "$got" = "$want" ] && break
  sleep 0.5
done
assert_eq "$want" "$got" "Prometheus' DCGM_FI_DEV_GPU_UTIL series of job $id (Hostname|gpu|value)"
user=$(job_field "$id" UserId)
assert_eq "${user%%(*}" "$(prom_query "count by (user) (DCGM_FI_DEV_GPU_UTIL{hpc_job=\"$id\"})" user | cut -d'|' -f1)" "user label"
# Power in W, and the energy counter is there per GPU.
assert_eq "$(printf '%s|0|100\n%s|1|110' "${nodes[0]}" "${nodes[0]}")" \
  "$(prom_query "DCGM_FI_DEV_POWER_USAGE{hpc_job=\"$id\",Hostname=\"${nodes[0]}\"}" Hostname gpu)" "power series"
assert_eq 4 "$(prom_query "count(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{hpc_job=\"$id\"})" | cut -d'|' -f1)" "energy counters"

assert_eq COMPLETED "$(wait_job "$id" 60)" "job $id state"
# The textfiles went with the job: Prometheus marks the series stale at its next scrapes.
stale=""
for _ in $(seq 1 40); do
  stale=$(prom_query "DCGM_FI_DEV_GPU_UTIL{hpc_job=\"$id\"}" Hostname gpu)
  [ -z "$stale" ] && break
  sleep 0.5
done
assert_eq "" "$stale" "series of job $id after it ended"

# The spool's newest sample of each GPU has what Prometheus scraped last; the energy counter
# Prometheus saw last is one the spool recorded.
for n in "${nodes[@]}"; do
  for g in 0 1; do
    last=$(prom_query "last_over_time(DCGM_FI_DEV_GPU_UTIL{hpc_job=\"$id\",Hostname=\"$n\",gpu=\"$g\"}[5m])" | cut -d'|' -f1)
    spool=$(spool_query "$n" "SELECT printf('%g', util_gpu) FROM gpu_samples WHERE job_id = $id AND gpu = $g ORDER BY ts DESC LIMIT 1")
    assert_eq "$spool" "$last" "$n GPU $g: last scraped utilisation vs the spool's newest sample"
    energy=$(prom_query "last_over_time(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{hpc_job=\"$id\",Hostname=\"$n\",gpu=\"$g\"}[5m])" | cut -d'|' -f1)
    [ -n "$energy" ] || fail "$n GPU $g: no energy counter was scraped"
    assert_eq 1 "$(spool_query "$n" "SELECT COUNT(*) FROM gpu_samples WHERE job_id = $id AND gpu = $g AND energy_mj = CAST($energy AS INTEGER) LIMIT 1")" \
      "$n GPU $g: the spool has a sample with the scraped energy counter $energy mJ"
  done
done
