#!/usr/bin/env bash
# Framework and script failures are never requeued (they would fail again), and the restart
# cap holds for infrastructure failures.
. "$(dirname "$0")/lib.sh"

value=$(submit --auto-recover=3 -o "$ACME_TEST_TMP/value.out" --wrap 'python3 -c "int(\"x\")"')
assert_eq FAILED "$(wait_job "$value")" "ValueError job"
assert_eq 0 "$(job_field "$value" Restarts)" "ValueError job's restarts"
node=$(job_nodes "$value")
assert_contains "$(spool_query "$node" "SELECT requeued || ' ' || outcome FROM recoveries WHERE job_id = $value")" \
  "0 framework failure (value_error): not requeued" "ValueError job's recovery row"

# Every GPU fails: each run drains its node, and the cap (1 restart) stops the second requeue.
use_scenario <<'TOML'
[[gpu]]
minor = 0
[[gpu]]
minor = 1
[[gpu]]
minor = 2
[[gpu]]
minor = 3
[[xid]]
at = 1.0
minor = 0
code = 79
TOML
# Each run fails once its sampler has seen the XID (lib.sh, until_go; go-0, then go-1), not 3 s on.
capped=$(submit -N1 --gres=gpu:1 --auto-recover=1 -o "$ACME_TEST_TMP/capped.out" \
  --wrap "$(until_go "$ACME_TEST_TMP/go-\${SLURM_RESTART_COUNT:-0}"); exit 1")
for run in 0 1; do
  deadline=$((SECONDS + 120))
  until [ "$(job_field "$capped" JobState)" = RUNNING ] && [ "$(job_field "$capped" Restarts)" = "$run" ]; do
    ((SECONDS < deadline)) || fail "the capped job's run $run not running in 120 s (state $(job_field "$capped" JobState), restarts $(job_field "$capped" Restarts))"
    sleep 0.3
  done
  wait_xid_seen "$capped" "$(job_nodes "$capped")"
  touch "$ACME_TEST_TMP/go-$run"
done
deadline=$((SECONDS + 120))
while state=$(job_field "$capped" JobState); [ "$state" != FAILED ]; do
  ((SECONDS < deadline)) || fail "capped job not FAILED in 120 s (state $state, restarts $(job_field "$capped" Restarts))"
  sleep 0.5
done
# The last epilog's helper, if it went on detached past faultguard's timeout, may still be
# writing its row: until it has ended.
wait_detached_epilog "$capped"
assert_eq 1 "$(job_field "$capped" Restarts)" "restarts of the capped job"
outcomes=$(for n in n1 n2 n3; do spool_query "$n" "SELECT restart || ':' || requeued FROM recoveries WHERE job_id = $capped"; done | sort | paste -sd' ')
assert_eq "0:1 1:0" "$outcomes" "recovery rows of the capped job (restart:requeued)"
