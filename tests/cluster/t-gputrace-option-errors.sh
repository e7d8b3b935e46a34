#!/usr/bin/env bash
# Bad --gpu-telemetry values (and ACME_GPU_TELEMETRY) refuse the submission with one line that
# names the flag; good ones are accepted; without the flag nothing is sampled (default=off).
. "$(dirname "$0")/lib.sh"

for bad in abc 0 -1 0.1 99999; do
  if out=$(sbatch --gpu-telemetry="$bad" --wrap true 2>&1); then
    fail "sbatch accepted --gpu-telemetry=$bad: $out"
  fi
  assert_contains "$out" "gputrace: --gpu-telemetry=$bad:" "error for --gpu-telemetry=$bad"
done
if out=$(ACME_GPU_TELEMETRY=abc sbatch --wrap true 2>&1); then
  fail "sbatch accepted ACME_GPU_TELEMETRY=abc: $out"
fi
assert_contains "$out" "gputrace: ACME_GPU_TELEMETRY=abc:" "error for ACME_GPU_TELEMETRY"
if out=$(srun --gpu-telemetry=abc true 2>&1); then
  fail "srun accepted --gpu-telemetry=abc"
fi
assert_contains "$out" "gputrace: --gpu-telemetry=abc:" "srun's error"

id=$(submit -N1 --gres=gpu:1 -o /dev/null --wrap 'sleep 1')
assert_eq COMPLETED "$(wait_job "$id")" "untraced job"
node=$(job_nodes "$id")
assert_eq 0 "$(spool_query "$node" "SELECT COUNT(*) FROM gpu_samples WHERE job_id = $id")" "samples of a job that did not ask"
assert_eq "" "$(spool_query "$node" "SELECT interval FROM jobs WHERE job_id = $id")" "sampling interval of a job that did not ask"

id=$(ACME_GPU_TELEMETRY=0.5 submit -N1 --gres=gpu:1 -o /dev/null --wrap 'sleep 2')
assert_eq COMPLETED "$(wait_job "$id")" "job traced through ACME_GPU_TELEMETRY"
node=$(job_nodes "$id")
assert_eq 0.5 "$(spool_query "$node" "SELECT interval FROM jobs WHERE job_id = $id")" "interval from ACME_GPU_TELEMETRY"
