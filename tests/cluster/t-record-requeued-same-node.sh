#!/usr/bin/env bash
# A job an admin requeues (`scontrol requeue`) whose next run lands on the same node, both runs
# ending while slurmdbd is down: the node's outbox keeps each run's part in a file of its own
# (NODE.JOB.0.record, NODE.JOB.1.record), and once slurmdbd is back each lands on its own run's
# row, numbered by its run (restart 0, then 1). Before the fix the first run's epilog already
# counted the requeue (SLURM_JOB_RESTART_COUNT 1): its part was NODE.JOB.1.record, the next run's
# epilog wrote its own part over it, and the first run's record was lost without a line. The
# order is made certain, not timed: slurmdbd is killed before the requeue, record_retry=0 (no
# retrier), and each step waits for what the product says it did.
. "$(dirname "$0")/lib.sh"

start_requeue_job requeue-same
node=$(job_nodes "$id")
log=$(spool_dir)/$node.faultguard.log
# The first run's row in slurmdbd, and slurmctld told its index, before slurmdbd goes down
# (t-record-requeued-late-part says why).
has_row() { [ -n "$(sacct -n -X -j "$id" -o JobID 2>/dev/null)" ] && [ "$(slurmdbd_queue)" = 0 ]; }
wait_slurmdbd_until "slurmdbd has no row of job $id" has_row

# Waits until run RESTART's part of the job is kept in the node's outbox and nothing publishes it
# any more: its publisher found slurmdbd down, said so (the job's LINES-th such line at least; the
# epilog and its publisher can come and go between two looks) and left it for the node's next epilog.
kept_lines() { grep -c "^job $id on $node: record not in AdminComment: slurmdbd does not answer.*kept for another try at the node's next epilog" "$log" 2>/dev/null; }
wait_kept() { # restart lines what
  local part=$(spool_dir)/run/$node.$id.$1.record deadline=$((SECONDS + 90))
  until [ -e "$part" ] && [ "$(kept_lines)" -ge "$2" ] && ! record_part_publishing "$id" "$node"; do
    ((SECONDS < deadline)) ||
      fail "$3: no part kept as $part within 90 s: $(ls "$(spool_dir)/run"); $(grep -h "^job $id " "$log")"
    sleep 0.3
  done
}

kill "$(cat "$pidfile")"
for _ in $(seq 1 50); do kill -0 "$(cat "$pidfile" 2>/dev/null)" 2>/dev/null || break; sleep 0.1; done
kill -0 "$(cat "$pidfile" 2>/dev/null)" 2>/dev/null && fail "slurmdbd did not stop"
scontrol requeue "$id" || fail "scontrol requeue $id refused"
wait_kept 0 1 "job $id's first run"
wait_job_state "$id" PENDING 60 "job $id after its requeue"
# The next run on the same node, soon (the requeue's own BeginTime is minutes on). Not in the
# second slurmd revoked the first run's credential in (before the job was pending again): slurmd
# refuses a launch credential made in that second ("Job credential revoked") and the job fails.
scontrol update JobId="$id" NodeList="$node" || fail "cannot put job $id on $node"
scontrol update JobId="$id" StartTime=now+2 >/dev/null 2>&1 || true
wait_job_state "$id" RUNNING 60 "job $id's second run"
assert_eq "$node" "$(job_nodes "$id")" "job $id's second run's node"
touch "$go"
assert_eq COMPLETED "$(wait_job "$id" 120)" "job $id"
wait_kept 1 2 "job $id's second run"
# Both runs' parts, each in its own file, each saying its own run.
for restart in 0 1; do
  part=$(spool_dir)/run/$node.$id.$restart.record
  [ -e "$part" ] || fail "run $restart's part of job $id is not in $node's outbox: $(ls "$(spool_dir)/run"); $(grep -h "^job $id " "$log")"
  assert_eq "$restart" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["restart"])' "$part")" "the restart in $part"
done

# slurmdbd back; slurmctld sends both runs' rows. The node's next epilog publishes both parts.
restore_plugstack
"$ACME_SRC_DIR/scripts/minicluster" up >/dev/null || fail "minicluster up (slurmdbd) failed"
two_rows() { [ "$(sacct -j "$id" -D -X -n -P -o State 2>/dev/null | paste -sd' ')" = "REQUEUED COMPLETED" ]; }
wait_slurmdbd_until "slurmdbd does not show job $id's first run REQUEUED and its second COMPLETED" two_rows
other=$(submit -w "$node" -o /dev/null --wrap true)
assert_eq COMPLETED "$(wait_job "$other" 60)" "job $other on $node"
wait_run_record_nodes first "$id" "$node"
wait_record_nodes "$id" "$node"
assert_eq "0 1" "$(acme_records "$id" | python3 -c 'import json,sys; print(*(json.loads(l)["restart"] for l in sys.stdin))')" \
  "the restart counts in job $id's records"
echo "ok"
