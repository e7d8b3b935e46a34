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

slurmdbd_to_freeze
on_exit restore_plugstack
faultguard_keys record_retry=600 record_retry_pause=20

# The job runs until the test lets it end: its row reaches slurmdbd before the freeze however
# slow slurmctld's queue to slurmdbd is, and what is left to write then is its record alone.
go=$ACME_TEST_TMP/go
id=$(submit -N2 --gres=gpu:1 -o /dev/null --wrap "until [ -e $go ]; do sleep 0.2; done; exit 0")
until [ -n "$(sacct -n -X -j "$id" -o JobID 2>/dev/null)" ]; do
  case $(job_field "$id" JobState) in PENDING | RUNNING | CONFIGURING) ;; *) fail "job $id ended before its row reached slurmdbd: $(job_field "$id" JobState)" ;; esac
  sleep 0.5
done
kill -STOP "$dbd"
touch "$go"
frozen=$SECONDS
assert_eq COMPLETED "$(wait_job "$id" 120)" "job $id state"
mapfile -t nodes < <(job_nodes "$id")
assert_eq 2 "${#nodes[@]}" "nodes of job $id"
end=$(date -d "$(job_field "$id" EndTime)" +%s)

# Each publisher gives up (its budget, 44.5 s for two nodes, or its hard stop, 180 s) and says
# so before it ends.
logs=$(spool_dir)/n*.faultguard.log
for n in "${nodes[@]}"; do
  idle=0
  until grep -q "^job $id on $n: record not in AdminComment: .*kept for another try: the node's retrier tries again until 10 min after the job's end" $logs; do
    if record_part_publishing "$id" "$n"; then idle=0; else idle=$((idle + 1)); fi
    ((idle < 2)) || fail "no 'kept ... the node's retrier' line for job $id on $n, and no publisher of it left: $(grep -h "^job $id " $logs)"
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

# No further job: the retriers write both parts, within the bound (600 s after the end): past
# it, a retrier gives its part up and ends, and the wait fails with its line.
wait_record_nodes "$id" "${nodes[@]}"
echo "record complete $(($(date +%s) - end)) s after the job's end"
for n in "${nodes[@]}"; do
  # The retrier's line follows its try's end; it comes while the retrier runs.
  idle=0
  until grep -q "^job $id on $n: record in AdminComment (.*); by the node's retrier, try [0-9]*, [0-9]* s after the job's end$" $logs; do
    if record_retrier_pid "$n" >/dev/null; then idle=0; else idle=$((idle + 1)); fi
    ((idle < 2)) || fail "no retrier line for job $id on $n, and its retrier ended: $(grep -h "^job $id on $n" $logs)"
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
