#!/usr/bin/env bash
# With slurmdbd down, a job ends as fast as ever: the record's publisher (detached from the
# epilog) gives up after a 1 s connection check (not libslurm's 10 s MessageTimeout) and says
# so in the node's faultguard log.
. "$(dirname "$0")/lib.sh"

pidfile=$ACME_MINICLUSTER_DIR/run/slurmdbd.pid
[ -f "$pidfile" ] || skip "the minicluster runs without accounting"
kill "$(cat "$pidfile")"
on_exit '"$ACME_SRC_DIR/scripts/minicluster" up >/dev/null'
for _ in $(seq 1 50); do kill -0 "$(cat "$pidfile" 2>/dev/null)" 2>/dev/null || break; sleep 0.1; done

id=$(submit -N1 --gres=gpu:1 -o "$ACME_TEST_TMP/job.out" --wrap 'exit 1')
assert_eq FAILED "$(wait_job "$id" 60)" "job state"
deadline=$((SECONDS + 20))
until grep -q "job $id on .*: record not in AdminComment: slurmdbd does not answer" "$ACME_MINICLUSTER_DIR"/spool/n*.faultguard.log; do
  ((SECONDS < deadline)) || fail "no 'slurmdbd does not answer' line for job $id in the nodes' faultguard logs"
  sleep 0.3
done
# The node is back to idle well before libslurm's own timeout would have let it go.
node=$(job_nodes "$id")
end=$(date -d "$(job_field "$id" EndTime)" +%s)
until [ "$(sinfo -h -N -n "$node" -o %T)" = idle ]; do
  (($(date +%s) - end < 8)) || fail "$node still $(sinfo -h -N -n "$node" -o %T) 8 s after job $id ended"
  sleep 0.2
done
