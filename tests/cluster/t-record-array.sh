#!/usr/bin/env bash
# Every task of a job array keeps its own record: slurmdbd reads a bare id that is also the
# array's id as the whole array, so the task that kept the array's id must not write over its
# siblings' records.
. "$(dirname "$0")/lib.sh"

array=$(submit --array=1-4 -o /dev/null --wrap 'sleep 1')
deadline=$((SECONDS + 90))
while [ -n "$(squeue -h -j "$array" -o %i 2>/dev/null)" ]; do
  ((SECONDS < deadline)) || fail "array $array not done in 90 s"
  sleep 0.5
done
# Each task's record is written after its epilog by the detached helper (a clean job's helper
# publishes its part itself; a retry runs as --publish, the node's record retrier's too): read
# them once every task has one, or once no part of the array's tasks is on its way (then what is
# there is all there will be). slurmdbd may still show the array as one row for a while after
# the tasks end: that counts as not yet.
records() {
  sacct -j "$array" -X -n -P -o JobIDRaw,AdminComment | python3 -c '
import base64, json, sys, zlib
for line in sys.stdin.read().splitlines():
    raw, comment = line.split("|", 1)
    tokens = [t for t in comment.split() if t.startswith("ACME1:")]
    job = json.loads(zlib.decompress(base64.b64decode(tokens[0][6:])))["job"] if tokens else None
    print(raw, job)'
}
# A helper of this minicluster (its spool: another one may run beside it, tests/cluster/run), or
# a part of a task (a job id from the array's on: this test's) in an outbox (record_part_pending).
parts_on_their_way() {
  local f name node job
  pgrep -f -- "(acme-faultguard-epilog .*--spool $(spool_dir) .*--detached |--publish $(spool_dir)/.*\.record)" >/dev/null && return 0
  for f in "$(spool_dir)"/run/*.record; do
    [ -e "$f" ] || continue
    name=${f##*/} node=${name%%.*} job=${name#*.} job=${job%%.*}
    [[ $job =~ ^[0-9]+$ ]] && ((job >= array)) && record_part_pending "$job" "$node" && return 0
  done
  return 1
}
idle=0
while :; do
  rows=$(records)
  [ "$(grep -c ' None$' <<<"$rows")" -eq 0 ] && [ "$(grep -c . <<<"$rows")" -eq 4 ] && break
  if parts_on_their_way; then idle=0; else idle=$((idle + 1)); fi
  ((idle >= 2)) && break  # two looks: a helper between its fork and its exec shows no name yet
  sleep 0.5
done
assert_eq 4 "$(printf '%s\n' "$rows" | grep -c .)" "tasks in slurmdbd"
printf '%s\n' "$rows" | while read -r raw job; do
  [ "$raw" = "$job" ] || fail "array task $raw holds the record of job $job (all: $(echo $rows))"
done || exit 1
