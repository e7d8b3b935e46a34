#!/usr/bin/env bash
# A 2-node job whose one node's epilog never reports (its spool is locked by another process,
# so faultguard's helper there fails or is stopped at its timeout): the record still lands in
# slurmdbd with the other node's part, and it names the node that is missing.
. "$(dirname "$0")/lib.sh"

db=$(spool_db n2)
if [ ! -f "$db" ]; then  # a fresh cluster: a first job on n2 creates its spool
  warm=$(submit -N1 -w n2 --gres=gpu:1 --gpu-telemetry=1 -o /dev/null --wrap true)
  wait_job "$warm" 60 >/dev/null
fi
[ -f "$db" ] || fail "no spool $db after a job on n2"
id=$(submit -N2 -w n1,n2 --gres=gpu:1 --gpu-telemetry=1 -o "$ACME_TEST_TMP/job.out" --wrap 'sleep 4; exit 2')
# Once the job runs, hold n2's spool in an exclusive transaction past the end of its epilog.
deadline=$((SECONDS + 30))
until [ "$(job_field "$id" JobState)" = RUNNING ]; do
  ((SECONDS < deadline)) || fail "job $id did not start"
  sleep 0.2
done
python3 -c '
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
c.execute("BEGIN EXCLUSIVE")
time.sleep(40)
' "$db" &
locker=$!
on_exit 'kill $locker 2>/dev/null'
assert_eq FAILED "$(wait_job "$id" 90)" "job state"
wait_record_nodes "$id" n1
record=$(acme_records "$id" | tail -n 1)
printf '%s' "$record" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["expected"] == ["n1", "n2"], r["expected"]
assert sorted(r["nodes"]) == ["n1"], sorted(r["nodes"])
' || fail "record of job $id: expected n1's part only, with n1 and n2 expected: $record"
kill $locker 2>/dev/null
wait $locker 2>/dev/null
# What a reader names: the expected node without a part.
missing=$(printf '%s' "$record" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(",".join(n for n in r["expected"] if n not in r["nodes"]))')
assert_eq n2 "$missing" "missing node"
