#!/usr/bin/env bash
# Jobs that exit 3, die of SIGKILL, print a Python ValueError, or lose a GPU (XID 79) each get
# their task exit in the spool, the right stored diagnosis, and the same answer from
# `faultdiag --job`. An evidence line quoted from a log is stored redacted: the API key a job
# printed in its error stays in its log, out of the spool and the job record.
. "$(dirname "$0")/lib.sh"

use_uniform_scenario 80 79

d=$ACME_TEST_TMP
exit3=$(submit -o "$d/exit3.out" --wrap 'echo starting; exit 3')
killed=$(submit -o "$d/killed.out" --wrap 'echo starting; kill -9 $$')
value=$(submit -o "$d/value.out" --wrap 'python3 -c "import sys; print(\"loading\"); int(\"x\")"')
secret=$(submit -o "$d/secret.out" --wrap 'python3 -c "raise ValueError(\"bad endpoint config: api_key=sk-AbCdEf0123456789XyZaBcDeF0123456789\")"')
# --auto-recover=0: drain the node on the hardware evidence, but requeue nothing. It fails once
# its sampler has seen the XID (lib.sh, until_go), not 3 s on.
xid=$(submit -N1 --gres=gpu:1 --gpu-telemetry=1 --auto-recover=0 -o "$d/xid.out" --wrap \
  "$(until_go "$d/go"); "'echo "RuntimeError: NCCL communicator was aborted on rank 0" >&2; exit 1')
wait_job_state "$xid" RUNNING 60 "XID job $xid"
wait_xid_seen "$xid" "$(job_nodes "$xid")"
touch "$d/go"

assert_eq FAILED "$(wait_job "$exit3")" "exit-3 job"
assert_eq FAILED "$(wait_job "$killed")" "SIGKILL job"
assert_eq FAILED "$(wait_job "$value")" "ValueError job"
assert_eq FAILED "$(wait_job "$secret")" "ValueError job with a secret"
assert_eq FAILED "$(wait_job "$xid" 90)" "XID job"

check() { # job expected-diagnosis expected-task-exit what
  local node
  node=$(job_nodes "$1" | head -n 1)
  assert_eq "$3" "$(spool_query "$node" "SELECT exit_code || ':' || IFNULL(signal, 0) FROM task_exits WHERE job_id = $1 AND step_id = 4294967291")" "$4: batch task exit"
  assert_eq "$2" "$(stored_diagnosis "$node" "$1")" "$4: stored diagnosis"
  local reason=${2#*|}
  reason=${reason%|*}
  local answer
  answer=$(faultdiag --job "$1" --json) || fail "$4: faultdiag --job $1 failed: $answer"
  assert_contains "$answer" "\"reason\":\"$reason\"" "$4: faultdiag --job"
}

check "$exit3" "unknown|unknown|none" "3:0" "exit 3"
check "$value" "framework|value_error|fix_code" "1:0" "ValueError"
check "$secret" "framework|value_error|fix_code" "1:0" "ValueError with a secret"
evidence=$(spool_query "$(job_nodes "$secret")" "SELECT evidence FROM diagnoses WHERE job_id = $secret")
assert_contains "$evidence" "bad endpoint config: api_key=[REDACTED" "the stored evidence line, redacted"
case "$evidence$(faultdiag --job "$secret" --json)" in *sk-AbCdEf0123456789*) fail "the API key reached the stored evidence: $evidence" ;; esac
check "$xid" "infrastructure|gpu_lost|drain" "1:0" "XID 79"
node=$(job_nodes "$killed")
assert_eq "9" "$(spool_query "$node" "SELECT signal FROM task_exits WHERE job_id = $killed AND step_id = 4294967291")" "SIGKILL: batch task signal"
assert_contains "$(spool_query "$node" "SELECT evidence FROM diagnoses WHERE job_id = $killed")" "signal 9" "SIGKILL: evidence"
xid_node=$(job_nodes "$xid")
assert_contains "$(spool_query "$xid_node" "SELECT evidence FROM diagnoses WHERE job_id = $xid")" "79" "XID: evidence"
assert_eq "1|0" "$(spool_query "$xid_node" "SELECT drained || '|' || requeued FROM recoveries WHERE job_id = $xid")" "XID: drained, not requeued (cap 0)"
assert_contains "$(sinfo -h -N -n "$xid_node" -o '%T %E')" "acme: gpu_lost XID 79 on GPU" "drain reason of $xid_node"
# A job that succeeds gets no diagnosis.
ok=$(submit -o /dev/null --wrap true)
assert_eq COMPLETED "$(wait_job "$ok")" "successful job"
assert_eq "" "$(stored_diagnosis "$(job_nodes "$ok")" "$ok")" "diagnosis of a successful job"
