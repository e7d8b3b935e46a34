#!/usr/bin/env bash
# User B cannot see or cancel user A's evaluation; A's trials run as A, never as the daemon.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/evalsched-lib.sh"
userA=$(test_user)
es_setup
es_start
chmod 666 "$EVALSCHED_SOCKET"
cli=$ACME_BUILD_DIR/evalsched/cli/evalsched
out=$(runuser -u "$userA" -- env EVALSCHED_SOCKET="$EVALSCHED_SOCKET" "$cli" submit "$ES"/ckpt/run7/step-100 --suite "$ES"/suite.toml 2>&1) ||
  fail "user A's submit refused: $out"
id=$(echo "$out" | sed -n 's/^evaluation \([0-9]*\) submitted.*/\1/p')
# B: another uid. 'nobody' exists on every Debian system.
b_status=$(runuser -u nobody -- env EVALSCHED_SOCKET="$EVALSCHED_SOCKET" "$cli" status 2>&1)
assert_eq "no evaluations" "$b_status" "what B sees in status"
b_show=$(runuser -u nobody -- env EVALSCHED_SOCKET="$EVALSCHED_SOCKET" "$cli" status "$id" 2>&1) && fail "B saw A's evaluation: $b_show"
assert_contains "$b_show" "evaluation $id not found (or not yours)" "B's status $id"
b_cancel=$(runuser -u nobody -- env EVALSCHED_SOCKET="$EVALSCHED_SOCKET" "$cli" cancel "$id" 2>&1) && fail "B cancelled A's evaluation"
assert_contains "$b_cancel" "not found (or not yours)" "B's cancel"
# The jobs run as A: once the daemon has submitted some (a loaded machine takes its time).
inst=$(es_sql 'SELECT id FROM instance')
deadline=$((SECONDS + 120))
until users=$(squeue -h -t all -o '%u %j' | grep " evalsched-$inst-" | cut -d' ' -f1 | sort -u) && [ -n "$users" ]; do
  ((SECONDS < deadline)) || fail "no job of evaluation $id in squeue within 120 s of its submission"
  sleep 0.3
done
assert_eq "$userA" "$users" "the user the trials run as"
# A sees and cancels it; root (admin) sees it too.
grep -q "^$id .*$userA" <<<"$(evalsched status)" || fail "root does not see A's evaluation"
runuser -u "$userA" -- env EVALSCHED_SOCKET="$EVALSCHED_SOCKET" "$cli" cancel "$id" >/dev/null || fail "A could not cancel"
assert_eq cancelled "$(es_wait "$id" 30)" "state after A's cancel"
# The daemon's scancel reaches slurmctld in its own time: none left pending or running, soon.
deadline=$((SECONDS + 120))
while left=$(squeue -h -t pending,running -o '%j' | grep "^evalsched-$inst-"); do
  ((SECONDS < deadline)) || fail "jobs of evaluation $id left pending or running 120 s after A's cancel: $left"
  sleep 0.3
done
