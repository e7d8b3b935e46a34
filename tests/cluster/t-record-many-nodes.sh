#!/usr/bin/env bash
# timeout: 1500
# A pretraining-sized job's record is complete: on a second minicluster of 128 nodes
# (ACME_RECORD_NODES), a failed job on every node with --gpu-telemetry ends, and its run's
# record in slurmdbd holds a part from each of the 128 nodes, written with a few slurmdbd
# writes per node at most (the nodes take turns: core/publish_pacing.hpp), while no node's
# epilog waits on the publish. Before the turns, 32 nodes kept 21-23 parts and 48 nodes 7-8.
# Prints one line, which tests/bench/record-scale collects at 32, 128 and 256 nodes:
#   record-scale: 128 nodes: parts 128 of 128, slurmdbd writes 131 (1.02 a node), slowest epilog 2210 ms, complete 19 s after the end
. "$(dirname "$0")/lib.sh"

nodes=${ACME_RECORD_NODES:-128}
[ "$(id -u)" -eq 0 ] || skip "needs root (a second minicluster)"
# The harness's cluster tells whether this machine runs accounting (scripts/compat may leave it
# out); the bench runs without one.
outer=${ACME_MINICLUSTER_DIR:-/tmp/acme-minicluster}
[ -n "${ACME_RECORD_SCALE_BENCH:-}" ] || [ "$(cat "$outer/accounting" 2>/dev/null)" = yes ] ||
  skip "the minicluster runs without accounting (the record lives in slurmdbd)"
command -v slurmdbd >/dev/null || skip "no slurmdbd here"

# Its own state and ports: past the demo's (+200), the bench's (+300) and the packages
# test's (+400) clusters, whose nodes stay below +500; this one's first 99 slurmd take
# +601..+699, the rest +1100 up, slurmdbd +700 and MariaDB +701.
second_minicluster_dir
mc_port=$((${ACME_MINICLUSTER_PORT:-16817} + 600))
on_exit 'second_minicluster_down "$mc" "$mc_port"'
# The publishers' lines stay with the test (the spool goes with the cluster).
on_exit 'mkdir -p "$ACME_TEST_TMP/spool-logs" && cp "$mc"/spool/*.faultguard.log "$ACME_TEST_TMP/spool-logs/" 2>/dev/null'
trap 'exit 1' TERM INT
export ACME_MINICLUSTER_DIR=$mc ACME_MINICLUSTER_PORT=$mc_port
"$ACME_SRC_DIR/scripts/minicluster" up --nodes "$nodes" --gpus 1 --no-prometheus >"$ACME_TEST_TMP/up.log" 2>&1 ||
  { tail -n 20 "$ACME_TEST_TMP/up.log" >&2; fail "minicluster up --nodes $nodes (port $mc_port, $mc) failed"; }
export SLURM_CONF=$mc/etc/slurm.conf
echo "up: $nodes nodes in $mc"
# A part its publisher kept (slurmdbd too slow for its time: 25 of 128 on a loaded machine) gets
# the node's record retrier's rounds (record_retrier.hpp): here a minute apart, for 10 minutes.
retry_s=600
sed -i "/faultguard.so/ s|\$| record_retry=$retry_s record_retry_pause=60|" "$mc/etc/plugstack.conf"

# A failed job on every node: each node's epilog diagnoses and hands its part over.
id=$(sbatch --parsable -N "$nodes" --gres=gpu:1 --gpu-telemetry=1 -t 5 -o "$ACME_TEST_TMP/job.out" \
  --wrap 'echo "RuntimeError: the data loader died"; exit 3') || fail "sbatch -N $nodes failed"
state=$(wait_job "$id" 300)
assert_eq FAILED "$state" "job $id state"
ended=$SECONDS

# The record once every part is in, and the publishers once they are done (each ends within
# its budget: 40 s plus three turns of 0.25 s a node, capped at a minute each, its late look
# included; a publisher in a slurmdbd call at its budget's end has 135 s more before its hard
# stop, and the epilogs of a loaded node end a minute after the job), the nodes' retriers too
# (each ends once its node's part is in, or its rounds are over: retry_s after the end).
count_parts() {
  acme_records "$id" | tail -n 1 | python3 -c 'import json,sys; r=json.loads(sys.stdin.read() or "null"); print(len(r["nodes"]) if r else 0)'
}
publishing() {
  pgrep -f -- "--publish $(spool_dir)/.*/n[0-9]*\.$id\.0\.record" >/dev/null ||
    # A helper run again after an overrun diagnosis (faultguard(8) timeout=) publishes in-process.
    pgrep -f -- "acme-faultguard-epilog --job $id .*--spool $(spool_dir) " >/dev/null ||
    pgrep -f -- "--retry-outbox --spool $(spool_dir) " >/dev/null
}
parts=0 complete_after="" last_look=""
turn=$((nodes / 4 < 60 ? nodes / 4 : 60))
deadline=$((SECONDS + 43 + 3 * turn + 135 + 60 + retry_s))
while ((SECONDS < deadline)); do
  if [ -z "$complete_after" ]; then
    parts=$(count_parts)
    [ "$parts" -eq "$nodes" ] && complete_after=$((SECONDS - ended))
  fi
  if ! publishing; then
    [ "$last_look" = done ] && break
    last_look=done  # one more look after the last publisher exited
  fi
  sleep 1
done
parts=$(count_parts)

# What it cost: the publishers' writes (their result lines), the slowest epilog of the job
# (faultguard's slurmd line ends "(epilog N ms)").
logs=("$mc"/spool/n*.faultguard.log)
writes=$(cat "${logs[@]}" 2>/dev/null | sed -n "s/^job $id on n[0-9]*: record in AdminComment ([0-9]* bytes, \([0-9]*\) writes\{0,1\}.*/\1/p" |
  awk '{ s += $1 } END { print s + 0 }')
slowest_write=$(cat "${logs[@]}" 2>/dev/null | sed -n "s/^job $id on n[0-9]*: record in AdminComment (.*slowest \([0-9]*\) ms)$/\1/p" | sort -n | tail -n 1)
published=$(cat "${logs[@]}" 2>/dev/null | grep -c "^job $id on n[0-9]*: record in AdminComment (")
slowest=$(cat "$mc"/log/slurmd-n*.log 2>/dev/null | grep "job $id on n[0-9]*: " |
  sed -n 's/.*(epilog \([0-9]*\) ms)$/\1/p' | sort -n | tail -n 1)
echo "record-scale: $nodes nodes: parts $parts of $nodes, slurmdbd writes $writes ($(awk -v w="$writes" -v n="$nodes" 'BEGIN { printf "%.2f", w / n }') a node, the slowest ${slowest_write:-unknown} ms), slowest epilog ${slowest:-unknown} ms, complete ${complete_after:-never} s after the end"
# Why a part is missing, when one is: the publishers' other lines.
if [ "$parts" -ne "$nodes" ]; then
  cat "${logs[@]}" 2>/dev/null | grep "^job $id on " | grep -v "record in AdminComment (" | sort | uniq -c | sort -rn | head -n 5 >&2
fi

assert_eq "$nodes" "$parts" "parts in job $id's record (of $nodes nodes)"
assert_eq "$nodes" "$published" "publishers of job $id that said 'record in AdminComment'"
# About one write a node where slurmdbd keeps up with the slots; on a 2-core minicluster with
# all of a 128-node job's epilogs at once a write takes seconds and undoes others: 1.3 a node
# at 32 nodes, 3 at 128 under a loaded machine. Never a write per node per node (quadratic).
((writes <= 4 * nodes)) || fail "job $id: $writes slurmdbd writes for $nodes parts (more than four a node)"
# Every part lists the job's nodes, so a reader can tell a missing one.
listed=$(acme_records "$id" | tail -n 1 | python3 -c 'import json,sys; r=json.loads(sys.stdin.read()); print(len(set(r.get("expected", []))))')
assert_eq "$nodes" "$listed" "nodes the record expects"
