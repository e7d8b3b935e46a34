#!/usr/bin/env bash
# timeout: 300
# A record publisher that slurmdbd leaves hanging in a call past its budget is stopped at its
# hard limit with a line in the helpers' log, and its part stays in the node's outbox for the
# next epilog. The stop used to be SIGALRM's silent default 20 s past the budget, shorter than a
# libslurm call to a slurmdbd that does not answer: tests/bench/record-scale 256 lost a part so,
# with no line anywhere. Here the publisher of a run whose row has not reached slurmdbd yet
# (slurmctld queues rows) waits for it with its session open, as an epilog's does, and slurmdbd
# is frozen (SIGSTOP) under it: the call then hangs (a frozen slurmdbd held one over 150 s).
# A publisher that finds slurmdbd frozen before it connects, or down, says "slurmdbd query
# failed" or "does not answer" within its budget instead (t-record-slurmdbd-down). The stop
# starts the node's record retrier (record_retrier.hpp; t-record-retry-after-freeze), which
# would try the part again; it ends once the part is gone.
. "$(dirname "$0")/lib.sh"

slurmdbd_to_freeze

# The hand-off an epilog leaves in the outbox (record_outbox.hpp), of a run slurmdbd has no row
# of yet: a job id past any the minicluster gives.
node=n2 job=$((2000000000 + RANDOM))
part=$(spool_dir)/run/$node.$job.0.record
log=$ACME_TEST_TMP/publisher.log
mkdir -p "$(spool_dir)/run"
now=$(date +%s)
python3 -c 'import json, sys; print(json.dumps({"job": int(sys.argv[1]), "array_job_id": 0, "array_task_id": 0,
  "restart": 0, "submit": 0, "end": int(sys.argv[2]), "expected": ["n1", "n2"], "node": "n2", "part": {"ts": float(sys.argv[2])}}))' \
  "$job" "$now" >"$part"
chmod 600 "$part"
on_exit 'rm -f "'"$part"'"'
started=$SECONDS
"$ACME_BUILD_DIR/acme-faultguard-epilog" --publish "$part" 2>"$log" &
publisher=$!
# Once its session is open (its connection to slurmdbd up), waiting for the row, well inside its
# budget (44.5 s for a two-node job).
dbd_port=$(scontrol show config | sed -n 's/^AccountingStoragePort *= *//p')
[ -n "$dbd_port" ] || fail "no AccountingStoragePort in slurmctld's config"
until grep -q "pid=$publisher," <<<"$(ss -Htnp state established "( dport = :$dbd_port )" 2>/dev/null)"; do
  kill -0 "$publisher" 2>/dev/null || fail "the publisher of job $job ended before slurmdbd was frozen: $(cat "$log")"
  sleep 0.2
done
kill -STOP "$dbd"
# Its hard stop: the budget and 135 s (publish_hard_stop_s), 180 s; a minute's grace on a loaded machine.
deadline=$((SECONDS + 240))
while kill -0 "$publisher" 2>/dev/null; do
  ((SECONDS < deadline)) || { kill "$publisher"; fail "the publisher of job $job still runs $((SECONDS - started)) s after it started"; }
  sleep 1
done
wait "$publisher"
rc=$?
kill -CONT "$dbd"
echo "publisher: exit $rc after $((SECONDS - started)) s: $(cat "$log")"
assert_eq 1 "$rc" "the publisher's exit status"
assert_contains "$(cat "$log")" "job $job on $node: record not in AdminComment: its publisher was stopped at its hard limit (180 s" \
  "the publisher's line"
assert_contains "$(cat "$log")" "kept for another try: the node's retrier tries again until 30 min after the job's end, then the node's next epilog" \
  "the publisher's line"
[ -f "$part" ] || fail "job $job: its part is not kept in the outbox ($part)"
retrier=$(record_retrier_pid "$node") || fail "the publisher's hard stop started no record retrier for $node"
echo "record retrier of $node: $retrier"
rm -f "$part"
# With no other part of the node's in the outbox, it ends at its next look (every 15 s).
if [ -z "$(ls "$(spool_dir)/run/$node."*.record 2>/dev/null)" ]; then
  deadline=$((SECONDS + 60))
  while kill -0 "$retrier" 2>/dev/null; do
    ((SECONDS < deadline)) || fail "the record retrier of $node ($retrier) still runs 60 s after the outbox emptied"
    sleep 1
  done
fi
