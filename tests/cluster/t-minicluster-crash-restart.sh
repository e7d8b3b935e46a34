#!/usr/bin/env bash
# A minicluster whose daemons died (a killed CI run, a rebooted machine) starts clean at the
# next `up`: slurmctld numbers jobs from 1 again, so the last life's spool must not survive, or
# gpuacct -j lists the new job 1 with the old job 1's state and GPUs (a CI run once listed a
# running job as an old one's COMPLETED with 1 GPU). A second minicluster of two nodes, beside
# the harness's, is crashed and brought up again; the old job 1 ran on n1, the new one runs on
# n2 (on the same node the new row would replace the old one and hide the leftover).
. "$(dirname "$0")/lib.sh"

second_minicluster_dir
# Clear of the harness's cluster (+1..+111 and up), the demo's (+200) and the packages' (+400).
mc_port=$((${ACME_MINICLUSTER_PORT:-16817} + 600))
minicluster() { ACME_MINICLUSTER_DIR=$mc ACME_MINICLUSTER_PORT=$mc_port "$ACME_SRC_DIR/scripts/minicluster" "$@"; }
on_exit 'second_minicluster_down "$mc" "$mc_port"'

minicluster up --nodes 2 --no-accounting --no-prometheus >"$ACME_TEST_TMP/up1.log" 2>&1 ||
  { cat "$ACME_TEST_TMP/up1.log" >&2; fail "second minicluster did not come up (port $mc_port, $mc)"; }
export SLURM_CONF=$mc/etc/slurm.conf
gpuacct() { "$ACME_BUILD_DIR/acct/gpuacct/gpuacct" --spool-dir "$mc/spool" "$@"; }

first=$(submit -N1 -w n1 --gres=gpu:1 --gpu-telemetry=1 -o /dev/null --wrap 'sleep 1')
assert_eq 1 "$first" "the first job's id on a new minicluster"
assert_eq COMPLETED "$(wait_job "$first" 60)" "job $first"
deadline=$((SECONDS + 120))
until [ "$(gpuacct -X -j 1 -P -n --format=JobID,AllocGPUS 2>/dev/null)" = "1|1" ] || ((SECONDS >= deadline)); do sleep 0.5; done
assert_eq "1|1" "$(gpuacct -X -j 1 -P -n --format=JobID,AllocGPUS 2>/dev/null)" "gpuacct -j 1 before the crash"

# The crash: every daemon gone at once, the state directory left as it was. SIGKILL is not
# instant: a loaded machine once had slurmctld still alive a second later, and `up` rightly took
# it for running (then waited for nodes of a cluster that was dying). Wait until each is gone.
pids=()
for f in "$mc"/run/*.pid; do pids+=("$(cat "$f")"); done
kill -9 "${pids[@]}" 2>/dev/null
for _ in $(seq 1 600); do
  alive=
  for p in "${pids[@]}"; do
    [ -n "$p" ] && kill -0 "$p" 2>/dev/null && [ "$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$p/status" 2>/dev/null)" != Z ] && alive+=" $p"
  done
  [ -z "$alive" ] && break
  sleep 0.1
done
[ -z "$alive" ] || fail "killed daemons still alive after 60 s:$alive"
minicluster up --nodes 2 --no-accounting --no-prometheus >"$ACME_TEST_TMP/up2.log" 2>&1 ||
  { cat "$ACME_TEST_TMP/up2.log" >&2; fail "the crashed minicluster did not come up again"; }
grep -q "already up" "$ACME_TEST_TMP/up2.log" && fail "up after the crash took the dead daemons for running ones: $(cat "$ACME_TEST_TMP/up2.log")"

second=$(submit -N1 -w n2 --gres=gpu:2 --gpu-telemetry=1 -o /dev/null --wrap 'sleep 600')
assert_eq 1 "$second" "the first job's id after the clean start"
# (It runs until the test cancels it, however long the fresh cluster takes to start it.)
deadline=$((SECONDS + 120))
until [ "$(gpuacct -X -j 1 -P -n --format=JobID,State,AllocGPUS 2>/dev/null)" = "1|RUNNING|2" ] || ((SECONDS >= deadline)); do sleep 0.5; done
assert_eq "1|RUNNING|2" "$(gpuacct -X -j 1 -P -n --format=JobID,State,AllocGPUS 2>/dev/null)" \
  "gpuacct -j 1 after the clean start (the new job 1 only, not the last life's)"
scancel "$second"
