#!/usr/bin/env bash
# With slurmdbd down, a job ends as fast as ever: the record's publisher (detached from the
# epilog) stops after a 1 s connection check (not libslurm's 10 s MessageTimeout) and says so
# in the node's faultguard log, and the part waits in the node's outbox: once slurmdbd is back,
# the node's next epilog (or its record retrier, whichever comes first: t-record-retry-after-freeze)
# publishes it and the outbox is empty again.
. "$(dirname "$0")/lib.sh"

pidfile=$ACME_MINICLUSTER_DIR/run/slurmdbd.pid
[ -f "$pidfile" ] || skip "the minicluster runs without accounting"
kill "$(cat "$pidfile")"
on_exit '"$ACME_SRC_DIR/scripts/minicluster" up >/dev/null'
for _ in $(seq 1 50); do kill -0 "$(cat "$pidfile" 2>/dev/null)" 2>/dev/null || break; sleep 0.1; done

id=$(submit -N1 --gres=gpu:1 -o "$ACME_TEST_TMP/job.out" --wrap 'exit 1')
assert_eq FAILED "$(wait_job "$id" 60)" "job state"
node=$(job_nodes "$id")
end=$(date -d "$(job_field "$id" EndTime)" +%s)
# The publisher's line comes before it ends.
idle=0
until grep -q "job $id on $node: record not in AdminComment: slurmdbd does not answer" "$(spool_dir)/$node.faultguard.log"; do
  if record_part_publishing "$id" "$node"; then idle=0; else idle=$((idle + 1)); fi
  ((idle < 2)) || fail "no 'slurmdbd does not answer' line for job $id in $node's faultguard log, and no publisher of it left: $(grep -h "^job $id " "$(spool_dir)/$node.faultguard.log")"
  sleep 0.3
done
# The node is back to idle well before libslurm's own timeout would have let it go.
until [ "$(sinfo -h -N -n "$node" -o %T)" = idle ]; do
  (($(date +%s) - end < 8)) || fail "$node still $(sinfo -h -N -n "$node" -o %T) 8 s after job $id ended"
  sleep 0.2
done

# The part was kept, not dropped: once slurmdbd is back, the node's next epilog publishes it
# (slurmctld sends the job's row when slurmdbd returns).
part=$(ls "$(spool_dir)/run/$node.$id."*.record 2>/dev/null | head -n 1)
[ -n "$part" ] || fail "job $id: no part of $node kept in $(spool_dir)/run for a later try"
"$ACME_SRC_DIR/scripts/minicluster" up >/dev/null || fail "minicluster up (slurmdbd back) failed"
next=$(submit -N1 -w "$node" -o /dev/null --wrap 'exit 0')
assert_eq COMPLETED "$(wait_job "$next" 60)" "job $next state"
wait_record_nodes "$id" "$node"
# Its publisher removes it once it has seen its part in the record, and ends.
idle=0
while [ -e "$part" ]; do
  if record_part_publishing "$id" "$node"; then idle=0; else idle=$((idle + 1)); fi
  ((idle < 2)) || fail "$part still there after its record landed, and no publisher of it left"
  sleep 0.3
done
