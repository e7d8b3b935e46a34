#!/usr/bin/env bash
# A failed job's diagnosis that overruns faultguard's timeout= (a node too loaded to diagnose in
# time: 35 of a 256-node job's nodes lost their record parts that way) is stopped, the job gets
# no recovery, and the helper runs again after the epilog, detached, so the node's diagnosis
# row and its part of the job's record are still written. The overrun is made by a helper= that
# sleeps before it execs the real helper, except when the plugin starts it detached.
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
echo "ok"
