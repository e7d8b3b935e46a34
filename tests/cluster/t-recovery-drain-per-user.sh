#!/usr/bin/env bash
# One user's jobs never take more than drain_per_user nodes out of service (issue 33): with
# drain_per_user=1, a job of the test user loses a GPU (XID 79) on one node, which is drained
# with a reason ending "(job J uid U)"; the same user's next such job on another node is not
# drained: its recovery row says the bound held it back and an admin decides. A bound, not a
# verdict: both jobs still get their diagnosis.
. "$(dirname "$0")/lib.sh"
user=$(test_user)
uid=$(id -u "$user")
conf=$ACME_MINICLUSTER_DIR/etc/plugstack.conf
cp "$conf" "$ACME_TEST_TMP/plugstack.conf.orig"
sed -i "/faultguard.so/ s|\$| drain_per_user=1|" "$conf"
on_exit 'restore_plugstack; scontrol update nodename=n[1-3] state=resume >/dev/null 2>&1'
use_uniform_scenario 80 79
scontrol update nodename=n[1-3] state=resume >/dev/null 2>&1
chmod 777 "$ACME_TEST_TMP"

# Each fails once its sampler has seen the XID (lib.sh, until_go), not 3 s on.
xid_job() { # node
  local j
  j=$(submit --uid="$user" -w "$1" -N1 --gres=gpu:1 --gpu-telemetry=1 --auto-recover=0 -o "$ACME_TEST_TMP/xid-$1.out" \
    --wrap "$(until_go "$ACME_TEST_TMP/go-$1"); "'echo "RuntimeError: NCCL communicator was aborted on rank 0" >&2; exit 1')
  wait_job_state "$j" RUNNING 60 "XID job $j on $1" >&2
  wait_xid_seen "$j" "$1" >&2
  touch "$ACME_TEST_TMP/go-$1"
  echo "$j"
}
first=$(xid_job n1)
[ -n "$first" ] || fail "the first XID job (above)"
assert_eq FAILED "$(wait_job "$first" 90)" "the first XID job"
state=$(sinfo -h -N -n n1 -o '%T|%E')
assert_contains "$state" "drain" "n1's state"
assert_contains "$state" "acme: gpu_lost XID 79 on GPU 0 (job $first uid $uid)" "n1's drain reason, with its job and uid"

second=$(xid_job n2)
[ -n "$second" ] || fail "the second XID job (above)"
assert_eq FAILED "$(wait_job "$second" 90)" "the second XID job"
assert_eq "infrastructure|gpu_lost|drain" "$(stored_diagnosis n2 "$second" | head -n 1)" "the second job's diagnosis"
if grep -q drain <<<"$(sinfo -h -N -n n2 -o '%T')"; then fail "n2 was drained past drain_per_user=1: $(sinfo -h -N -n n2 -o '%T %E')"; fi
assert_eq "0" "$(spool_query n2 "SELECT drained FROM recoveries WHERE job_id = $second")" "n2's recovery row"
assert_contains "$(spool_query n2 "SELECT outcome FROM recoveries WHERE job_id = $second")" \
  "uid $uid's jobs already hold 1 nodes drained (drain_per_user=1): not drained (acme: gpu_lost XID 79 on GPU 0), an admin decides" \
  "why n2 stayed in service"
# The XID is still the node's: the next job there meets the health gate, which drains n2 on it
# (hardware evidence checked before a job, not a user's job taking nodes out of service).
third=$(submit -w n2 -N1 --gres=gpu:1 -o /dev/null --wrap true)
deadline=$((SECONDS + 60))
until grep -q drain <<<"$(sinfo -h -N -n n2 -o '%T')"; do
  ((SECONDS < deadline)) || fail "the health gate did not drain n2 for the next job: $(sinfo -h -N -n n2 -o '%T %E')"
  sleep 0.5
done
assert_contains "$(sinfo -h -N -n n2 -o '%E')" "health gate" "n2's reason after the gate"
# The gate's verdict is n2's: its failed check is stored, so the old XID does not fail n2 again
# once an admin resumes it.
assert_eq 0 "$(spool_query n2 "SELECT passed FROM health_checks WHERE job_id = $third")" "the gate's check of n2 for job $third"
scancel "$third" 2>/dev/null
