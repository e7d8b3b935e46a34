#!/usr/bin/env bash
# A run's record part that reaches slurmdbd only after the job's next run has its own row (an
# admin's `scontrol requeue` gives the next run a row about 5 s later; a loaded node's publisher
# or the node's retrier can come after that) lands on its own run's row, not the next run's, and
# is not given up. The race is made certain, not timed: slurmdbd is down when the first run
# ends, so its part waits in the node's outbox (record_retry=0: no retrier, the node's next
# epilog publishes it); the next run starts and its row reaches slurmdbd once slurmdbd is back;
# only then does a job on the first run's node publish the part. Before the fix the publisher
# found the job's newest row submitted after its run and gave the part up.
. "$(dirname "$0")/lib.sh"

start_requeue_job requeue-late
first_node=$(job_nodes "$id")
# The first run's row in slurmdbd before it goes down, and slurmctld told its index (the queue to
# slurmdbd empty): a run whose start slurmdbd took but slurmctld did not hear back about is sent
# again later, and slurmdbd then makes the next run's start that row's (one row for two runs).
has_row() { [ -n "$(sacct -n -X -j "$id" -o JobID 2>/dev/null)" ] && [ "$(slurmdbd_queue)" = 0 ]; }
wait_slurmdbd_until "slurmdbd has no row of job $id" has_row

kill "$(cat "$pidfile")"
for _ in $(seq 1 50); do kill -0 "$(cat "$pidfile" 2>/dev/null)" 2>/dev/null || break; sleep 0.1; done
kill -0 "$(cat "$pidfile" 2>/dev/null)" 2>/dev/null && fail "slurmdbd did not stop"
scontrol requeue "$id" || fail "scontrol requeue $id refused"
# The first run's publisher finds slurmdbd down and keeps the part for the node's next epilog.
log=$(spool_dir)/$first_node.faultguard.log
# The epilog starts once slurmd has ended the job's tasks, after `scontrol requeue` returned: "no
# publisher left" counts only once its epilog or publisher was seen (seen at load 15: the line
# came 0.6 s after two looks that found neither yet).
idle=0 seen=0 deadline=$((SECONDS + 60))
until grep -q "^job $id on $first_node: record not in AdminComment: slurmdbd does not answer.*kept for another try at the node's next epilog" "$log"; do
  if record_part_publishing "$id" "$first_node"; then idle=0 seen=1; elif ((seen)); then idle=$((idle + 1)); fi
  ((idle < 2)) || fail "no 'kept for another try' line for job $id on $first_node, and no publisher of it left: $(grep -h "^job $id " "$log")"
  ((SECONDS < deadline)) || fail "no epilog or publisher of job $id on $first_node within 60 s of its requeue: $(grep -h "^job $id " "$log")"
  sleep 0.3
done
part=$(compgen -G "$(spool_dir)/run/$first_node.$id.*.record") || fail "job $id: the first run's part is not in $first_node's outbox: $(ls "$(spool_dir)/run"); $(grep -h "^job $id " "$log")"
# The part is the first run's, numbered so: restart 0 in its name and hand-off (the epilog's
# SLURM_JOB_RESTART_COUNT already counts the admin's requeue: the next run's part on this node
# would have taken the same file), and the job's end no later than the epilog wrote it
# (slurmctld's end is backfill's guess at the next run's by then: the turns would count from it).
assert_eq "$(spool_dir)/run/$first_node.$id.0.record" "$part" "the first run's part in $first_node's outbox"
python3 - "$part" <<'PY' || fail "the first run's hand-off $part: $(cat "$part")"
import json, os, sys
h = json.load(open(sys.argv[1]))
assert h["restart"] == 0, ("restart", h["restart"])
assert 0 < h["end"] <= os.stat(sys.argv[1]).st_mtime + 1, ("end", h["end"], os.stat(sys.argv[1]).st_mtime)
PY
wait_job_state "$id" PENDING 60 "job $id after its requeue"
# The next run, elsewhere, now (the requeue's own BeginTime is 20 min on).
scontrol update JobId="$id" ExcNodeList="$first_node" || fail "cannot keep job $id off $first_node"
scontrol update JobId="$id" StartTime=now >/dev/null 2>&1 || true
wait_job_state "$id" RUNNING 60 "job $id's second run"
second_node=$(job_nodes "$id")

# slurmdbd back: the next run's row reaches it (slurmctld queued it), the first run's part does
# not (no retrier; nothing ran on its node since).
restore_plugstack
"$ACME_SRC_DIR/scripts/minicluster" up >/dev/null || fail "minicluster up (slurmdbd) failed"
# (slurmdbd may take the second run's row before the first run's start and end.)
two_rows() { [ "$(sacct -j "$id" -D -X -n -P -o State 2>/dev/null | paste -sd' ')" = "REQUEUED RUNNING" ]; }
wait_slurmdbd_until "slurmdbd does not show job $id's first run REQUEUED and its second RUNNING" two_rows
[ -e "$part" ] || fail "the first run's part left $first_node's outbox before its next epilog: $(grep -h "^job $id " "$log")"
assert_eq "null" "$(acme_records "$id" | head -n 1)" "the first run's record before the part is published"

# The node's next epilog publishes the part: on the first run's row, though the job's newest row
# is the running second run's.
other=$(submit -w "$first_node" -o /dev/null --wrap true)
assert_eq COMPLETED "$(wait_job "$other" 60)" "job $other on $first_node"
wait_run_record_nodes first "$id" "$first_node"
# The publisher writes its line after slurmdbd took the part, so sacct can show the part first
# (seen at load 10): the line follows; bounded, it returns as soon as the line is there.
deadline=$((SECONDS + 30))
until grep -q "^job $id on $first_node: record in AdminComment (" "$log"; do
  ((SECONDS < deadline)) || fail "no 'record in AdminComment' line for job $id on $first_node 30 s after its part landed: $(grep -h "^job $id " "$log")"
  sleep 0.3
done
first=$(acme_records "$id" | head -n 1)
printf '%s' "$first" | python3 -c "import json,sys; r=json.load(sys.stdin); sys.exit(0 if list(r['nodes']) == ['$first_node'] else 1)" ||
  fail "the first run's record: not $first_node's part alone: $first"
assert_eq "null" "$(acme_records "$id" | sed -n 2p)" "the second run's record while it runs"

# The second run ends; its record is its own.
touch "$go"
assert_eq COMPLETED "$(wait_job "$id" 120)" "job $id"
wait_record_nodes "$id" "$second_node"
second=$(acme_records "$id" | sed -n 2p)
printf '%s' "$second" | python3 -c "import json,sys; r=json.load(sys.stdin); sys.exit(0 if list(r['nodes']) == ['$second_node'] else 1)" ||
  fail "the second run's record: not $second_node's part alone: $second"
# Each run's record says its own run: 0, then 1 (gpuacct counts a job's restarts by them).
assert_eq "0 1" "$(acme_records "$id" | python3 -c 'import json,sys; print(*(json.loads(l)["restart"] for l in sys.stdin))')" \
  "the restart counts in job $id's records"
echo "ok"
