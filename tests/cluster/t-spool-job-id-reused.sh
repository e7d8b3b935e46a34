#!/usr/bin/env bash
# A job id Slurm hands out again never mixes with the older job's rows in the node spool. A
# spool outlives slurmctld's state (StateSaveLocation lost, a new controller) and MaxJobId
# wraps, so the next job can get an id the spool already has rows for. On Slurm 26.05+ each job
# has a SLUID: the older job's rows (planted here in the spool under the id a held job got, as
# such a spool holds them) move to retired/NODE.db when the new job's sampler starts, and the
# spool then holds the new job's rows alone. Before 26.05 there is no SLUID to tell the jobs
# apart: the test checks that none is recorded, and skips.
. "$(dirname "$0")/lib.sh"

G=$ACME_BUILD_DIR/acct/gpuacct/gpuacct
id=$(submit -N1 --gres=gpu:1 --gpu-telemetry=1 -o /dev/null --wrap 'sleep 1')
assert_eq COMPLETED "$(wait_job "$id" 60)" "job $id state"
node=$(job_nodes "$id")
sluid=$(spool_query "$node" "SELECT COALESCE(sluid, '') FROM jobs WHERE job_id = $id")
version=$(sinfo -V | awk '{print $2}')
major=${version%%.*} rest=${version#*.}
minor=${rest%%.*}
if ((major * 100 + 10#$minor < 2605)); then
  assert_eq "" "$sluid" "jobs.sluid of job $id on Slurm $version (no SLUIDs before 26.05)"
  skip "Slurm $version gives jobs no SLUID (26.05 does): a job id handed out again cannot be told from a requeue"
fi
[ -n "$sluid" ] || fail "job $id on Slurm $version: the spool's jobs row has no SLUID (SLURM_JOB_SLUID)"

# The next job, held so that its id is known before it runs; the older job's rows go in first.
next=$(submit -N1 -w "$node" --hold --gres=gpu:1 --gpu-telemetry=1 -o /dev/null --wrap 'sleep 2')
on_exit "scancel $next 2>/dev/null"
older=$(date -d '-2 hours' +%s)
spool_query "$node" "
  INSERT INTO jobs (job_id, uid, gid, node, gpus, started_at, interval, sluid, name, state)
    VALUES ($next, 0, 0, '$node', '0', $older, 1, 'older-$sluid', 'older-job', 'COMPLETED');
  INSERT INTO gpu_samples (job_id, gpu, ts, util_gpu) VALUES ($next, 0, $older + 1, 11), ($next, 0, $older + 2, 11);
  INSERT INTO gpu_events (job_id, gpu, ts, kind, code) VALUES ($next, 0, $older + 2, 'xid', 79);" ||
  fail "planting the older job's rows in $node's spool"
scontrol release "$next" || fail "scontrol release $next"
assert_eq COMPLETED "$(wait_job "$next" 60)" "job $next state"

# The spool holds the new job alone: its SLUID, its sampling start, its samples, no XID.
row=$(spool_query "$node" "SELECT sluid, COALESCE(name, ''), started_at > $older + 60 FROM jobs WHERE job_id = $next")
IFS='|' read -r new_sluid name fresh <<<"$row"
[ -n "$new_sluid" ] && [ "$new_sluid" != "older-$sluid" ] || fail "job $next's row keeps the older job's SLUID: $row"
[ "$name" != older-job ] || fail "job $next's row is the older job's: $row"
assert_eq 1 "$fresh" "job $next's sampling start is its own"
assert_eq 0 "$(spool_query "$node" "SELECT COUNT(*) FROM gpu_samples WHERE job_id = $next AND ts < $older + 60")" \
  "the older job's samples under id $next in $node's spool"
assert_eq 0 "$(spool_query "$node" "SELECT COUNT(*) FROM gpu_events WHERE job_id = $next")" \
  "the older job's XID under id $next in $node's spool"
[ "$(spool_query "$node" "SELECT COUNT(*) FROM gpu_samples WHERE job_id = $next")" -gt 0 ] ||
  fail "job $next has no samples of its own"
# gpuacct shows the new job: its name, no XID counted against it.
out=$("$G" --spool-dir "$(spool_dir)" -j "$next" -X -n -P -o JobID,JobName,XIDs 2>&1) || fail "gpuacct -j $next: $out"
assert_eq "$next|wrap|0" "$out" "gpuacct -j $next -o JobID,JobName,XIDs"

# The older job's rows, whole, in the retired spool, root's alone, readable as a spool.
retired=$(spool_dir)/retired
[ -f "$retired/$node.db" ] || fail "no retired spool $retired/$node.db"
assert_eq 700 "$(stat -c %a "$retired")" "mode of $retired"
assert_eq "older-$sluid|2|1" \
  "$(sqlite3 -batch -noheader "$retired/$node.db" "SELECT sluid, (SELECT COUNT(*) FROM gpu_samples WHERE job_id = $next), (SELECT COUNT(*) FROM gpu_events WHERE job_id = $next) FROM jobs WHERE job_id = $next")" \
  "the older job's rows in $retired/$node.db"
# (It warns that slurmdbd's job of that id, the new one, disagrees with the spool: it does.)
out=$("$G" --spool-dir "$retired" -j "$next" -X -n -P -o JobID,JobName 2>"$ACME_TEST_TMP/retired.err") ||
  fail "gpuacct --spool-dir $retired: $out $(cat "$ACME_TEST_TMP/retired.err")"
assert_eq "$next|older-job" "$out" "gpuacct --spool-dir $retired -j $next -o JobID,JobName"
sqlite3 "$retired/$node.db" "DELETE FROM jobs WHERE job_id = $next; DELETE FROM gpu_samples WHERE job_id = $next; DELETE FROM gpu_events WHERE job_id = $next"
