#!/usr/bin/env bash
# gpuacct after real jobs: -j shows each job's GPUs, utilisation, verdict and diagnosed reason;
# -P output is sacct's parsable2 (compared with what Slurm itself says of the job); --json
# validates against the schema in the tree; bad flags get sacct-like one-line errors, exit 1.
. "$(dirname "$0")/lib.sh"

gpuacct() { "$ACME_BUILD_DIR/acct/gpuacct/gpuacct" --spool-dir "$(spool_dir)" "$@"; }

use_uniform_scenario 90

busy=$(submit -J llama-pretrain -N1 --gres=gpu:2 --gpu-telemetry=1 -o "$ACME_TEST_TMP/busy.out" \
  --wrap 'echo $SLURM_JOB_GPUS; sleep 4')
broken=$(submit -J sft-run --gres=gpu:1 -o "$ACME_TEST_TMP/broken.out" \
  --wrap 'echo "Traceback (most recent call last):" >&2; echo "TypeError: unsupported operand type(s) for +: int and str" >&2; exit 1')
assert_eq COMPLETED "$(wait_job "$busy" 60)" "busy job"
assert_eq FAILED "$(wait_job "$broken" 60)" "broken job"

node=$(job_nodes "$busy")
gpus=$(head -n 1 "$ACME_TEST_TMP/busy.out")
assert_eq "$busy|llama-pretrain|pretrain|COMPLETED|2|$node:$gpus|90.0|ok|" \
  "$(gpuacct -X -j "$busy" -P -n --format=JobID,JobName,Type,State,AllocGPUS,GPUIDs,GPUUtil,Verdict,Reason 2>/dev/null)" \
  "gpuacct -j of the busy job"
assert_eq "$broken|FAILED|1:0|script|type_error" \
  "$(gpuacct -X -j "$broken" -P -n -o jobid,state,exitcode,category,reason 2>/dev/null)" "gpuacct -j of the failed job"
# Without -X, sacct's step lines follow the job: the batch step failed with the script's exit.
assert_eq "$broken|FAILED|1:0
$broken.batch|FAILED|1:0" "$(gpuacct -j "$broken" -P -n -o jobid,state,exitcode 2>/dev/null | grep -v '\.extern|')" \
  "job and step lines of the failed job"

# -P is sacct's parsable2: the same bytes sacct prints for these fields, built from Slurm's own record.
for id in "$busy" "$broken"; do
  expected="JobID|JobName|State|ExitCode
$id|$(job_field "$id" JobName)|$(job_field "$id" JobState)|$(job_field "$id" ExitCode)"
  assert_eq "$expected" "$(gpuacct -X -j "$id" -P --format=JobID,JobName,State,ExitCode 2>/dev/null)" "-P output of job $id"
done

# The minicluster runs slurmdbd: gpuacct checks the spools' job records against it and,
# when they agree, says nothing on stderr.
err=$(gpuacct -j "$busy" -n -P -o JobID 2>&1 >/dev/null)
assert_eq "" "$err" "stderr of gpuacct when the spool and slurmdbd agree"
assert_eq "$busy" "$(sacct -X -n -P -j "$busy" -o JobID)" "sacct knows job $busy"

# A table with sacct's header and dashes.
table=$(gpuacct -X -j "$busy" --format=JobID,State%-9,AllocGPUS 2>/dev/null)
assert_eq "JobID        State     AllocGPUS 
------------ --------- --------- 
$(printf '%-12s' "$busy") COMPLETED         2 " "$table" "table output"

# Bad input: one line, exit 1, nothing on stdout.
for args in "--bogus" "--format=JobID,Nope" "-S yesterday" "-s DONE"; do
  # shellcheck disable=SC2086
  out=$(gpuacct $args 2>"$ACME_TEST_TMP/err")
  status=$?
  assert_eq 1 "$status" "exit status of gpuacct $args"
  assert_eq "" "$out" "stdout of gpuacct $args"
  assert_eq 1 "$(wc -l <"$ACME_TEST_TMP/err")" "stderr lines of gpuacct $args"
  assert_contains "$(cat "$ACME_TEST_TMP/err")" "gpuacct: error: " "error of gpuacct $args"
done

# --json of every view validates against the schema in the tree.
python3 -c 'import jsonschema' 2>/dev/null || skip "python3-jsonschema missing: the --json schema check did not run"
for view in "" --failures --nodes --summary; do
  # shellcheck disable=SC2086
  gpuacct -S now-1hours --json $view >"$ACME_TEST_TMP/out.json" 2>/dev/null || fail "gpuacct --json $view failed"
  python3 - "$ACME_TEST_TMP/out.json" "$ACME_SRC_DIR/acct/gpuacct/gpuacct.schema.json" <<'PY' || fail "--json $view does not validate"
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))
PY
done
