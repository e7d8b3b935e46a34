#!/usr/bin/env bash
# timeout: 600
# A run's record is completed once slurmdbd answers again, with no further job on its nodes.
# slurmdbd is frozen (SIGSTOP, as when it is swamped: writes of 53 s were seen at high load)
# under a two-node job: each node's publisher gives its turn up and keeps its part in the
# outbox, and the node's record retrier (one per node, detached, record_retrier.hpp) takes
# over. Once slurmdbd goes on, the retriers' next round writes both parts, within the retry
# bound (record_retry=, here 600 s with a pause of 20 s), each with one line, and the retrier
# ends. Before the retrier the record stayed incomplete until each node's next epilog: hours
# on a pretraining cluster, or never on a drained node.
. "$(dirname "$0")/lib.sh"

pidfile=$ACME_MINICLUSTER_DIR/run/slurmdbd.pid
[ -f "$pidfile" ] || skip "the minicluster runs without accounting"
dbd=$(cat "$pidfile")
kill -0 "$dbd" || fail "slurmdbd ($dbd) is not running"
on_exit 'kill -CONT '"$dbd"' 2>/dev/null'
on_exit restore_plugstack
faultguard_keys record_retry=600 record_retry_pause=20

id=$(submit -N2 --gres=gpu:1 -o /dev/null --wrap 'sleep 4; exit 0')
# Its row in slurmdbd before the freeze: what is left to write is its record alone.
deadline=$((SECONDS + 60))
until [ -n "$(sacct -n -X -j "$id" -o JobID 2>/dev/null)" ]; do
  ((SECONDS < deadline)) || fail "job $id has no row in slurmdbd after 60 s"
  sleep 0.5
done
kill -STOP "$dbd"
frozen=$SECONDS
assert_eq COMPLETED "$(wait_job "$id" 120)" "job $id state"
mapfile -t nodes < <(job_nodes "$id")
assert_eq 2 "${#nodes[@]}" "nodes of job $id"
end=$(date -d "$(job_field "$id" EndTime)" +%s)

# Each publisher gives up: its budget (44.5 s for two nodes) or its hard stop (180 s).
logs=$(spool_dir)/n*.faultguard.log
deadline=$((SECONDS + 260))
for n in "${nodes[@]}"; do
  until grep -q "^job $id on $n: record not in AdminComment: .*kept for another try: the node's retrier tries again until 10 min after the job's end" $logs; do
    ((SECONDS < deadline)) || fail "no 'kept ... the node's retrier' line for job $id on $n: $(grep -h "^job $id " $logs)"
    sleep 1
  done
done
grep -h "^job $id on " $logs
for n in "${nodes[@]}"; do
  [ -n "$(ls "$(spool_dir)/run/$n.$id."*.record 2>/dev/null)" ] || fail "job $id: no part of $n kept in the outbox"
  record_retrier_pid "$n" >/dev/null || fail "no record retrier runs for $n ($(spool_dir)/run/$n.retrier.pid)"
done
echo "slurmdbd frozen for $((SECONDS - frozen)) s; retriers: $(for n in "${nodes[@]}"; do echo -n "$n=$(record_retrier_pid "$n") "; done)"
kill -CONT "$dbd"

# No further job: the retriers write both parts within the bound (600 s after the end, and a
# try's own time).
wait_record_nodes "$id" $((end + 600 + 60 - $(date +%s))) "${nodes[@]}"
echo "record complete $(($(date +%s) - end)) s after the job's end"
for n in "${nodes[@]}"; do
  deadline=$((SECONDS + 30))
  until grep -q "^job $id on $n: record in AdminComment (.*); by the node's retrier, try [0-9]*, [0-9]* s after the job's end$" $logs; do
    ((SECONDS < deadline)) || fail "no retrier line for job $id on $n: $(grep -h "^job $id on $n" $logs)"
    sleep 0.5
  done
  [ -z "$(ls "$(spool_dir)/run/$n.$id."*.record 2>/dev/null)" ] || fail "job $id: $n's part still in the outbox after it landed"
done
grep -h "^job $id on .*by the node's retrier" $logs
# Nothing else ran on the nodes after the job: the retriers did it.
after=$(sacct -n -X -P -N "$(IFS=,; echo "${nodes[*]}")" -S "$(date -d "@$end" +%Y-%m-%dT%H:%M:%S)" -o JobID 2>/dev/null | grep -vx "$id" || true)
assert_eq "" "$after" "jobs on ${nodes[*]} since job $id ended"
# And the retriers end once no part has a round left (they look every 15 s).
for n in "${nodes[@]}"; do
  deadline=$((SECONDS + 60))
  while record_retrier_pid "$n" >/dev/null; do
    ((SECONDS < deadline)) || fail "the record retrier of $n still runs 60 s after its parts landed"
    sleep 1
  done
done
