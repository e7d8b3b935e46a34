#!/usr/bin/env bash
# timeout: 180
# A hostile client beside normal users (issue 16): while user A holds many idle and slowloris
# connections (replacing each one lost) and sends an 8 MiB header, another user's status and list requests still answer,
# A's extra connections are refused with one line naming the limit, the slow ones are closed,
# the daemon stays small and its log bounded. Times are printed by tests/bench/evalsched-hostile,
# never asserted here.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/evalsched-lib.sh"
userA=$(test_user)
es_setup
cat >>"$ES"/evalsched.conf <<CONF
max_connections_per_user=16
request_timeout=3s
CONF
es_start
chmod 666 "$EVALSCHED_SOCKET"
cli=$ACME_BUILD_DIR/evalsched/cli/evalsched
as() { local u=$1; shift; runuser -u "$u" -- env EVALSCHED_SOCKET="$EVALSCHED_SOCKET" "$@"; }
# root's evaluation, for the other users' list and status to show.
id=$(es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/suite.toml)
[ -n "$id" ] || fail "no evaluation submitted"

as "$userA" /usr/bin/python3 "$ACME_SRC_DIR"/tests/cluster/hostile-client.py "$EVALSCHED_SOCKET" 12 100 20 8 \
  >"$ES"/hostile.out 2>&1 &
hostile=$!
sleep 1
answered=0
for i in $(seq 20); do
  out=$(as nobody "$cli" status 2>&1) || fail "nobody's status failed while the hostile client ran: $out"
  assert_eq "no evaluations" "$out" "nobody's status (request $i)"
  out=$(evalsched status 2>&1) || fail "root's status failed while the hostile client ran: $out"
  grep -q "^$id " <<<"$out" || fail "root's list lacks evaluation $id: $out"
  evalsched status "$id" >/dev/null 2>&1 || fail "root's status $id failed while the hostile client ran"
  answered=$((answered + 1))
  sleep 0.3
done
assert_eq 20 "$answered" "rounds answered beside the hostile client"
wait "$hostile"
cat "$ES"/hostile.out
line=$(cat "$ES"/hostile.out)
refused=$(echo "$line" | sed -n 's/.*connections: \([0-9]*\) refused.*/\1/p')
closed=$(echo "$line" | sed -n 's/.* \([0-9]*\) closed by the daemon.*/\1/p')
# 120 at once against a cap of 16, each refused one retried at once, for 12 s.
[ "${refused:-0}" -ge 104 ] || fail "expected at least 104 refusals (max_connections_per_user=16): $line"
# The 16 admitted are idle or slow: each closed after request_timeout=3s, and their successors too.
[ "${closed:-0}" -ge 32 ] || fail "expected the daemon to close the idle and slow connections, twice over in 12 s: $line"
assert_contains "$line" "MiB header: " "the oversized header's outcome"
grep -q "MiB header: HTTP/1.1 200" <<<"$line" && fail "the 8 MiB header was answered 200: $line"
# The daemon: alive, small, its log bounded (refusals are logged once per 10 s).
kill -0 "$ES_PID" || fail "evalschedd died"
hwm=$(awk '/VmHWM/ {print $2}' /proc/"$ES_PID"/status)
[ "$hwm" -lt 102400 ] || fail "evalschedd peaked at $hwm kB with an 8 MiB header in flight"
refusal_lines=$(grep -c "refused a connection" "$ES"/daemon.log)
[ "$refusal_lines" -le 3 ] || fail "$refusal_lines log lines for refusals (rate-limited: at most one per 10 s)"
assert_contains "$(grep "refused a connection" "$ES"/daemon.log | head -n 1)" "max_connections_per_user" "the refusal's log line"
# A is served again once its connections are gone.
out=$(as "$userA" "$cli" status 2>&1) || fail "user A's status after the hostile client ended: $out"
evalsched cancel "$id" >/dev/null
echo "closed=${closed:-?} refused=$refused peak_rss_kb=$hwm"
