#!/usr/bin/env bash
# A failed job's diagnosis that overruns faultguard's timeout= (a node too loaded to diagnose in
# time: 35 of a 256-node job's nodes lost their record parts that way) does not cost the node's
# diagnosis row or its part of the job's record, and the job gets no recovery from it.
# First a helper that has not even started when the time is up (a helper= that sleeps before it
# execs the real one, except when the plugin starts it detached): it cannot go on by itself, so
# it is stopped and runs again after the epilog, detached. Then a helper that is well into its
# diagnosis (waiting for the node's spool, which another writer holds): the epilog returns at
# timeout= and that same run goes on detached with what it has done, instead of being killed
# and starting over.
. "$(dirname "$0")/lib.sh"

conf=$ACME_MINICLUSTER_DIR/etc/plugstack.conf
real=$(sed -n '/faultguard\.so/ s/.* helper=\([^ ]*\).*/\1/p' "$conf")
[ -x "$real" ] || fail "no helper= on faultguard's plugstack line: $(grep faultguard.so "$conf")"
slow=$ACME_TEST_TMP/slow-helper
cat >"$slow" <<EOS
#!/bin/sh
case " \$* " in *" --detached "*) ;; *) echo "\$\$" >"$ACME_TEST_TMP/slow.pid"; sleep 8 ;; esac
exec "$real" "\$@"
EOS
chmod 755 "$slow"
on_exit restore_plugstack
faultguard_keys "helper=$slow timeout=2"

id=$(submit -N1 -w n1 -o "$ACME_TEST_TMP/job.out" --wrap 'echo "RuntimeError: the data loader died" >&2; exit 3')
assert_eq FAILED "$(wait_job "$id" 120)" "job $id"
[ -s "$ACME_TEST_TMP/slow.pid" ] || fail "the epilog never ran the slow helper= (plugstack: $(grep faultguard.so "$conf"))"
# The stopped run and what the plugin did next, in slurmd's log.
line=$(grep -h "faultguard: job $id on n1: diagnosis did not finish" "$ACME_MINICLUSTER_DIR"/log/slurmd-n1.log)
assert_contains "$line" "did not finish within 2 s and was stopped, no recovery; it runs again after the epilog for the job's record" "slurmd's line"
# The detached run's diagnosis row and record part (it may still be running as the job leaves).
for _ in $(seq 1 120); do
  [ -n "$(stored_diagnosis n1 "$id")" ] && break
  sleep 0.5
done
assert_eq "framework|runtime_error|fix_code" "$(stored_diagnosis n1 "$id")" "n1's stored diagnosis of job $id"
wait_record_nodes "$id" n1
assert_contains "$(acme_records "$id" | tail -n 1)" "runtime_error" "job $id's record"
# No recovery from the late run: the job was not requeued and n1 is not drained.
assert_eq 0 "$(job_field "$id" Restarts)" "job $id's restarts"
case $(sinfo -h -n n1 -o %T) in *drain*) fail "n1 was drained: $(sinfo -h -n n1 -o '%T %E')" ;; esac

# A diagnosis under way at timeout=: it goes on detached, the same run (the helper= counts its
# runs). It is held up the way a busy node holds it up: another writer has the node's spool
# (SQLite waits up to 10 s for it) until slurmd's log says the epilog let the helper go.
counting=$ACME_TEST_TMP/counting-helper
cat >"$counting" <<EOS
#!/bin/sh
echo "\$*" >>"$ACME_TEST_TMP/runs"
exec "$real" "\$@"
EOS
chmod 755 "$counting"
faultguard_keys "helper=$counting timeout=2"
go=$ACME_TEST_TMP/go
rm -f "$go" "$ACME_TEST_TMP/locked"
slow=$(submit -N1 -w n1 -o "$ACME_TEST_TMP/slow.out" --wrap "until [ -e $go ]; do sleep 0.2; done; echo 'RuntimeError: the data loader died' >&2; exit 3")
deadline=$((SECONDS + 60))
until [ "$(job_field "$slow" JobState)" = RUNNING ]; do
  ((SECONDS < deadline)) || fail "job $slow not running in 60 s: $(job_field "$slow" JobState)"
  sleep 0.3
done
python3 - "$(spool_db n1)" "$ACME_TEST_TMP/locked" "$ACME_MINICLUSTER_DIR/log/slurmd-n1.log" "faultguard: job $slow on n1: diagnosis did not finish" <<'PY' &
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
db.execute("BEGIN EXCLUSIVE")
open(sys.argv[2], "w").close()
end = time.time() + 8  # below the helper's 10 s wait for the spool
while time.time() < end and sys.argv[4] not in open(sys.argv[3], errors="replace").read():
    time.sleep(0.1)
db.execute("COMMIT")
PY
holder=$!
deadline=$((SECONDS + 120))
until [ -e "$ACME_TEST_TMP/locked" ]; do
  kill -0 "$holder" 2>/dev/null && ((SECONDS < deadline)) || fail "could not hold n1's spool (the holder $(kill -0 "$holder" 2>/dev/null && echo "did not take its lock in 120 s" || echo exited))"
  sleep 0.1
done
touch "$go"
assert_eq FAILED "$(wait_job "$slow" 120)" "job $slow"
wait "$holder" || fail "the spool holder failed"
line=$(grep -h "faultguard: job $slow on n1: diagnosis did not finish" "$ACME_MINICLUSTER_DIR"/log/slurmd-n1.log)
assert_contains "$line" "did not finish within 2 s; it goes on after the epilog, detached, no recovery, for the job's record" "slurmd's line"
wait_record_nodes "$slow" n1
assert_eq "framework|runtime_error|fix_code" "$(stored_diagnosis n1 "$slow")" "n1's stored diagnosis of job $slow"
assert_contains "$(acme_records "$slow" | tail -n 1)" "runtime_error" "job $slow's record"
# One run of the helper for the job: the one the epilog started went on (a rerun would be a second).
assert_eq 1 "$(grep -c -- "--job $slow " "$ACME_TEST_TMP/runs")" "runs of the helper for job $slow: $(cat "$ACME_TEST_TMP/runs")"
# What it said after the hand-over went to faultguard's log.
grep -q "^job $slow on n1: framework/runtime_error" "$(spool_dir)/n1.faultguard.log" ||
  fail "the detached run's diagnosis line is not in n1's faultguard log: $(grep -h "^job $slow " "$(spool_dir)/n1.faultguard.log")"
echo "ok"
