#!/usr/bin/env bash
# gpuacct on a job still running: its numbers so far come from the samples in the node spool
# (no summary exists until the sampler stops), the job is marked RUNNING, and once it ends the
# listing shows the summary the sampler wrote, the same utilisation. --live refreshes like
# watch(1) and stops by itself when the job has ended.
. "$(dirname "$0")/lib.sh"

gpuacct() { "$ACME_BUILD_DIR/acct/gpuacct/gpuacct" --spool-dir "$(spool_dir)" "$@"; }

use_uniform_scenario 70

job=$(submit -J running-pretrain -N1 --gres=gpu:2 --gpu-telemetry=1 -o "$ACME_TEST_TMP/job.out" \
  --wrap 'sleep 300')
# (The job runs until the test cancels it: what is asserted while it runs cannot outlast it.)
wait_job_state "$job" RUNNING 120 "job $job"
node=$(job_nodes "$job")
# Wait until the sampler has written a few ticks for both GPUs.
deadline=$((SECONDS + 120))
until n=$(spool_query "$node" "SELECT COUNT(DISTINCT gpu) FROM gpu_samples WHERE job_id = $job AND util_gpu IS NOT NULL" 2>/dev/null) && [ "${n:-0}" -ge 2 ]; do
  ((SECONDS < deadline)) || break
  sleep 0.5
done
assert_eq 2 "${n:-0}" "GPUs sampled within 120 s in job $job"
assert_eq 0 "$(spool_query "$node" "SELECT COUNT(*) FROM gpu_summaries WHERE job_id = $job")" \
  "no summary yet while job $job runs"

assert_eq "$job|RUNNING|2|70.0|ok" \
  "$(gpuacct -X -j "$job" -P -n --format=JobID,State,AllocGPUS,GPUUtil,Verdict 2>/dev/null)" \
  "gpuacct -j of the running job (from the spool's samples)"

# --live refreshes until the job ends, then prints the ended frame and exits 0 by itself.
gpuacct -X -j "$job" --live=1 --format=JobID,State >"$ACME_TEST_TMP/live.out" 2>&1 &
live=$!
# Its first frame written (a frame is flushed whole) before the job ends.
deadline=$((SECONDS + 120))
until grep -Eq "^ *$job +" "$ACME_TEST_TMP/live.out"; do
  kill -0 "$live" 2>/dev/null || fail "gpuacct --live ended before job $job did: $(cat "$ACME_TEST_TMP/live.out")"
  ((SECONDS < deadline)) || fail "gpuacct --live printed no frame with job $job in 120 s: $(cat "$ACME_TEST_TMP/live.out")"
  sleep 0.2
done
scancel "$job"
state=$(wait_job "$job" 60)
for _ in $(seq 1 30); do kill -0 "$live" 2>/dev/null || break; sleep 1; done
if kill -0 "$live" 2>/dev/null; then
  kill "$live"
  fail "gpuacct --live still running 30 s after job $job ended"
fi
wait "$live"
assert_eq 0 "$?" "exit status of gpuacct --live"
assert_contains "$(cat "$ACME_TEST_TMP/live.out")" "Every 1s: gpuacct -j $job " "--live frame header"
assert_contains "$(grep -A4 -m1 '^Every' "$ACME_TEST_TMP/live.out")" "RUNNING" "--live first frame"
assert_contains "$(tail -n 4 "$ACME_TEST_TMP/live.out")" "CANCELLED" "--live last frame"
assert_contains "$(grep '^Every' "$ACME_TEST_TMP/live.out" | tail -n 1)" "(ended)" "--live last frame header"
assert_eq CANCELLED "${state%% *}" "job $job after scancel"
for _ in $(seq 1 30); do
  [ "$(spool_query "$node" "SELECT COUNT(*) FROM gpu_summaries WHERE job_id = $job")" -ge 2 ] && break
  sleep 1
done
assert_eq "$job|70.0|ok" "$(gpuacct -X -j "$job" -P -n --format=JobID,GPUUtil,Verdict 2>/dev/null)" \
  "gpuacct -j of the ended job (from the sampler's summary)"
