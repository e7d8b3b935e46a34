#!/usr/bin/env bash
# timeout: 600
# However long slurmdbd stays down, a node has one record retrier: each job's publisher that
# keeps its part starts one, and one started while another runs ends at once (the lock
# SPOOL/run/NODE.retrier.pid). Here slurmdbd is frozen (SIGSTOP) while four jobs end one after
# another on one node: their four publishers give up and start retriers, and at no moment does
# more than one retrier (with at most one try of its own) run for the node. Once slurmdbd goes
# on, the one retrier writes every part: queued and written later, none dropped.
. "$(dirname "$0")/lib.sh"

slurmdbd_to_freeze
on_exit restore_plugstack
faultguard_keys record_retry=600 record_retry_pause=20

node=$(sinfo -h -N -t idle -o %N | head -n 1)
[ -n "$node" ] || fail "no idle node"
ids=()
kill -STOP "$dbd"
for k in 1 2 3 4; do ids+=("$(submit -N1 -w "$node" -o /dev/null --wrap "sleep $k; exit 0")"); done
for id in "${ids[@]}"; do assert_eq COMPLETED "$(wait_job "$id" 60)" "job $id state"; done
echo "jobs ${ids[*]} ended on $node with slurmdbd frozen"

# Until every publisher has given up (its hard stop at the latest), and 20 s after: the retrier
# processes of the node, counted each second. Not longer than a publisher of the jobs runs.
logs=$(spool_dir)/$node.faultguard.log
spool=$(spool_dir)
# The node's retrier processes, the supervisor of a try (run_bounded forks one from the retrier,
# its command line the retrier's) not counted apart: those whose parent is no retrier.
retriers_of() { # node
  local pids p parent n=0
  pids=$(pgrep -f -- "--retry-outbox --spool $spool --node $1\$") || { echo 0; return; }
  for p in $pids; do
    parent=$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f2)
    [ -n "$parent" ] || continue  # gone since
    grep -qx -- "$parent" <<<"$pids" || n=$((n + 1))
  done
  echo "$n"
}
most=0 most_tries=0 seen=0 idle=0
while :; do
  retriers=$(retriers_of "$node")
  tries=$(pgrep -c -f -- "--publish $spool/run/$node\.[0-9.]*record --retry-try" || true)
  ((retriers > most)) && most=$retriers
  ((tries > most_tries)) && most_tries=$tries
  ((retriers > 0)) && seen=1
  kept=0
  for id in "${ids[@]}"; do grep -q "^job $id on $node: record not in AdminComment: .*kept for another try" "$logs" && kept=$((kept + 1)); done
  if [ "$kept" -eq 4 ]; then
    [ -n "${all_kept:-}" ] || all_kept=$SECONDS
    ((SECONDS - all_kept >= 20)) && break
  else
    publishing=0
    for id in "${ids[@]}"; do record_part_publishing "$id" "$node" && publishing=1 && break; done
    if ((publishing)); then idle=0; else idle=$((idle + 1)); fi
    ((idle >= 2)) && break  # the assertions below say what is missing
  fi
  sleep 1
done
grep -h "^job \(${ids[0]}\|${ids[1]}\|${ids[2]}\|${ids[3]}\) on " "$logs"
echo "retriers of $node at once: at most $most (tries at once: at most $most_tries), $kept of 4 publishers kept their part"
assert_eq 4 "$kept" "publishers that kept their part with slurmdbd frozen"
assert_eq 1 "$seen" "a record retrier ran for $node"
((most <= 1)) || fail "$most record retriers ran at once for $node"
((most_tries <= 1)) || fail "$most retrier tries ran at once for $node"
pid=$(record_retrier_pid "$node") || fail "no record retrier named in $spool/run/$node.retrier.pid"
assert_eq 1 "$(retriers_of "$node")" "retriers of $node"

# Queued, and written once slurmdbd goes on: by that one retrier.
kill -CONT "$dbd"
for id in "${ids[@]}"; do wait_record_nodes "$id" "$node"; done
for id in "${ids[@]}"; do
  # The retrier's line follows its try's end; it comes while the retrier runs.
  idle=0
  until grep -q "^job $id on $node: record in AdminComment (.*); by the node's retrier" "$logs"; do
    if record_retrier_pid "$node" >/dev/null; then idle=0; else idle=$((idle + 1)); fi
    ((idle < 2)) || fail "job $id: no retrier line, and the retrier of $node ended ($(grep -h "^job $id on" "$logs"))"
    sleep 0.5
  done
done
grep -h "by the node's retrier" "$logs" | grep -E "^job (${ids[0]}|${ids[1]}|${ids[2]}|${ids[3]}) on "
