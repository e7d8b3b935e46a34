#!/usr/bin/env bash
# Jobs whose NVML is absent, fails to initialise, or hangs all finish with their own exit
# code; the spool says why there is no telemetry; no sampler is left behind.
. "$(dirname "$0")/lib.sh"

lib=$ACME_MINICLUSTER_DIR/nvml/libnvidia-ml.so.1
[ -f "$lib" ] || fail "the minicluster has no fake NVML at $lib"

run_case() { # name expected-error-substring
  local id
  id=$(submit -N1 --gres=gpu:1 --gpu-telemetry=1 -o /dev/null --wrap 'sleep 2; exit 3')
  assert_eq FAILED "$(wait_job "$id" 90)" "$1: job state"
  assert_eq 3:0 "$(job_field "$id" ExitCode)" "$1: job exit code"
  assert_no_sampler "$id"
  local node err
  node=$(job_nodes "$id")
  err=$(spool_query "$node" "SELECT telemetry_error FROM jobs WHERE job_id = $id")
  assert_contains "$err" "$2" "$1: telemetry_error"
  assert_eq no-data "$(spool_query "$node" "SELECT verdict FROM gpu_summaries WHERE job_id = $id")" "$1: verdict"
}

mv "$lib" "$lib.away"
on_exit 'mv "$lib.away" "$lib" 2>/dev/null; rm -f "$ACME_MINICLUSTER_DIR/nvml/scenarios/default.toml"'
run_case "NVML absent" "cannot load"
mv "$lib.away" "$lib"

mkdir -p "$ACME_MINICLUSTER_DIR/nvml/scenarios"
printf '[failure]\ninit = "fail"\n' >"$ACME_MINICLUSTER_DIR/nvml/scenarios/default.toml"
run_case "NVML init fails" "init failed"

printf '[failure]\ninit = "hang"\n' >"$ACME_MINICLUSTER_DIR/nvml/scenarios/default.toml"
run_case "NVML init hangs" "did not return"

# Four GPUs, as Slurm promises (else faultguard's health gate rightly drains the node).
printf '[[gpu]]\nminor = %d\n' 0 1 2 3 >"$ACME_MINICLUSTER_DIR/nvml/scenarios/default.toml"
printf '[failure]\nsample = "hang"\nhang_after = 0.5\n' >>"$ACME_MINICLUSTER_DIR/nvml/scenarios/default.toml"
id=$(submit -N1 --gres=gpu:1 --gpu-telemetry=1 -o /dev/null --wrap 'sleep 3; exit 3')
assert_eq FAILED "$(wait_job "$id" 90)" "sample hang: job state"
assert_eq 3:0 "$(job_field "$id" ExitCode)" "sample hang: job exit code"
assert_no_sampler "$id"
