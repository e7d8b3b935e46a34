#!/usr/bin/env bash
# Every job leaves its record in the node spool (so reports work without slurmdbd): user, name,
# type from --llm-job-type (validated at submit), the comment's tag or the name, state and
# sacct-style exit codes.
. "$(dirname "$0")/lib.sh"

if out=$(sbatch --llm-job-type=bogus --wrap true 2>&1); then
  fail "sbatch accepted --llm-job-type=bogus: $out"
fi
assert_contains "$out" "faultguard: --llm-job-type=bogus:" "error for a bad job type"

tagged=$(submit -J llama-train --llm-job-type=sft -N2 --gres=gpu:1 -o /dev/null --wrap 'sleep 1')
commented=$(submit -J run42 --comment="owner=alice llm-job-type=pretrain" -o /dev/null --wrap 'exit 4')
named=$(submit -J llama7b-eval-mmlu -o /dev/null --wrap true)
assert_eq COMPLETED "$(wait_job "$tagged")" "tagged job"
assert_eq FAILED "$(wait_job "$commented")" "commented job"
assert_eq COMPLETED "$(wait_job "$named")" "named job"

row() { # job node
  spool_query "$2" "SELECT user || '|' || name || '|' || job_type || '|' || job_type_source || '|' || state || '|' || exit_code || '|' || num_nodes || '|' || gpus_total FROM jobs WHERE job_id = $1"
}
for node in $(job_nodes "$tagged"); do
  assert_eq "root|llama-train|sft|tag|COMPLETED|0:0|2|2" "$(row "$tagged" "$node")" "record of the tagged job on $node"
done
assert_eq "root|run42|pretrain|comment|FAILED|4:0|1|0" "$(row "$commented" "$(job_nodes "$commented")")" "record of the commented job"
assert_eq "root|llama7b-eval-mmlu|eval|name|COMPLETED|0:0|1|0" "$(row "$named" "$(job_nodes "$named")")" "record of the named job"
n=$(spool_query "$(job_nodes "$named")" "SELECT submit_time > 0 AND start_time >= submit_time AND end_time >= start_time FROM jobs WHERE job_id = $named")
assert_eq 1 "$n" "submit <= start <= end"
