#!/usr/bin/env bash
# The straggler report: a 2-node job whose GPUs on n2 work at 38 % while n1's run at 95 % (the
# fake NVML's scripted utilisation, held for the whole job). gpuacct's job view scores each node
# against the typical (faster) node, n2 at 95/38 = 2.50, from the spools and from the job's
# record in slurmdbd, and --json carries the same scores under the job's acme part. While the job
# runs, each node's sampler publishes its own live score, from the work rates the nodes share
# (stall_share), as acme_job_node_slowness in the site's Prometheus: n1 1, n2 2.5.
. "$(dirname "$0")/lib.sh"
gpuacct() { "$ACME_BUILD_DIR/acct/gpuacct/gpuacct" --spool-dir "$(spool_dir)" "$@"; }

mkdir -p "$ACME_MINICLUSTER_DIR/nvml/scenarios"
scenario() { # util power_mw
  local g
  for g in 0 1 2 3; do
    printf '[[gpu]]\nminor = %d\nutil = [%s]\npower_mw = [%s]\nmem_util = [30]\n' "$g" "$1" "$2"
  done
}
scenario 95 300000 >"$ACME_MINICLUSTER_DIR/nvml/scenarios/n1.toml"
scenario 38 120000 >"$ACME_MINICLUSTER_DIR/nvml/scenarios/n2.toml"
# The samplers look (and share their work rates) every 0.5 s instead of every 30 s.
small_stall_windows
on_exit 'rm -f "$ACME_MINICLUSTER_DIR"/nvml/scenarios/n[12].toml; restore_plugstack'
scontrol update nodename=n[1-3] state=resume >/dev/null 2>&1

# 12 s of samples at least, and on until the test has read Prometheus' series of it (touch $go; 5
# minutes at most): a loaded node's samplers may publish them after 12 s.
go=$ACME_TEST_TMP/go
id=$(submit -N2 -w n[1-2] --gres=gpu:1 --gpu-telemetry=0.5 -o /dev/null \
  --wrap "sleep 12; $(until_go "$go")")
if [ "$(cat "$ACME_MINICLUSTER_DIR/prometheus" 2>/dev/null)" = yes ] && [ -n "${ACME_PROMETHEUS_URL:-}" ]; then
  got=""
  deadline=$((SECONDS + 120))
  while ((SECONDS < deadline)); do
    got=$(prom_query "acme_job_node_slowness{hpc_job=\"$id\"}" Hostname)
    [ "$got" = $'n1|1\nn2|2.5' ] && break
    sleep 0.5
  done
  assert_eq $'n1|1\nn2|2.5' "$got" "Prometheus' acme_job_node_slowness of job $id (Hostname|value)"
  assert_eq "$(job_field "$id" UserId | cut -d'(' -f1)" \
    "$(prom_query "acme_job_node_slowness{hpc_job=\"$id\",Hostname=\"n2\"}" user | cut -d'|' -f1)" "its user label"
fi
touch "$go"
assert_eq COMPLETED "$(wait_job "$id" 60)" "job $id's end"

view=$(gpuacct --source spool -j "$id" --detail 2>&1)
assert_contains "$view" "  n1  slowness 1.00 (GPU utilisation 95% against the typical node's 95%)" "n1's score (spools)"
assert_contains "$view" "  n2  slowness 2.50 (GPU utilisation 38% against the typical node's 95%)" "n2's score (spools)"

if [ "$(cat "$ACME_MINICLUSTER_DIR/accounting" 2>/dev/null || echo yes)" != no ] && command -v sacct >/dev/null; then
  wait_record_nodes "$id" n1 n2
  view=$(gpuacct -j "$id" -l 2>&1)
  assert_contains "$view" "  n2  slowness 2.50 (GPU utilisation 38% against the typical node's 95%)" "n2's score (gpuacct -l, slurmdbd)"
  gpuacct -j "$id" --json >"$ACME_TEST_TMP/out.json" 2>/dev/null || fail "gpuacct -j $id --json failed"
  assert_eq "n1 1.0|n2 2.5" "$(python3 -c '
import json, sys
job = json.load(open(sys.argv[1]))["jobs"][0]
print("|".join("%s %s" % (n["node"], n["slowness"]) for n in job["acme"]["slowness"]))' "$ACME_TEST_TMP/out.json")" "--json slowness"
  if python3 -c 'import jsonschema' 2>/dev/null; then
    python3 - "$ACME_TEST_TMP/out.json" "$ACME_SRC_DIR/acct/gpuacct/gpuacct.schema.json" <<'PY' || fail "--json does not validate"
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))
PY
  fi
fi
