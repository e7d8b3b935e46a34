#!/usr/bin/env bash
# A traced job that ends before its sampler is up: gputrace's prolog forks one child that waits
# for the job's first step, then becomes acme-gpu-sampler-start and then the sampler (one pid),
# and writes that pid with its start time to the pid file before it returns. `srun true` ends
# within the child's first look, so its epilog's stop mostly lands while the child still waits:
# the stop must still end it (through the sampler's final flush: the job's spool row is closed),
# and nothing may be left: no process the pid file named, no helper or sampler of the job, no
# pid file. --gpu-telemetry=off starts nothing at all.
. "$(dirname "$0")/lib.sh"

all_nodes_idle
run=$(spool_dir)/run
seen=$ACME_TEST_TMP/pidfiles
# Every pid file of n1 seen while the jobs run, "FILE: PID START" (the test runs as root, as the
# minicluster does).
(
  while :; do
    for f in "$run"/n1.*.sampler.pid; do
      [ -e "$f" ] && printf '%s: %s\n' "${f##*/}" "$(cat "$f" 2>/dev/null)"
    done
    sleep 0.005
  done
) >"$seen" 2>/dev/null &
watcher=$!
on_exit "kill $watcher 2>/dev/null"

ids=()
for _ in 1 2 3 4 5 6; do
  id=$(srun -Q -N1 -w n1 --gres=gpu:1 --gpu-telemetry=1 printenv SLURM_JOB_ID 2>"$ACME_TEST_TMP/srun.err") ||
    fail "srun failed: $(cat "$ACME_TEST_TMP/srun.err")"
  [[ $id =~ ^[0-9]+$ ]] || fail "srun printed no job id: $id"
  ids+=("$id")
done
off=$(srun -Q -N1 -w n1 --gres=gpu:1 --gpu-telemetry=off printenv SLURM_JOB_ID 2>"$ACME_TEST_TMP/srun.err") ||
  fail "srun failed: $(cat "$ACME_TEST_TMP/srun.err")"
for id in "${ids[@]}" "$off"; do assert_eq COMPLETED "$(wait_job "$id")" "job $id state"; done
kill "$watcher" 2>/dev/null
wait "$watcher" 2>/dev/null

named=0
for id in "${ids[@]}"; do
  [ ! -e "$run/n1.$id.sampler.pid" ] || fail "job $id's pid file is left after its epilog: $(cat "$run/n1.$id.sampler.pid")"
  # This minicluster's only (its spool: the helper has it as spool=, the sampler as --spool): job
  # ids repeat across miniclusters, and another harness's sampler of a job with the same id
  # failed this test (a compat run beside a loaded one).
  left=$(pgrep -af "acme-gpu-sampler(-start)? .*--job $id .*(--spool |spool=)$(spool_dir)( |\$)" || true)
  [ -z "$left" ] || fail "job $id's helper or sampler still runs after its epilog: $left"
  # Each process a pid file of this job named (the waiting child, the helper, the sampler: one
  # pid, one start time) is gone, not merely renamed.
  while read -r pid start; do
    [ -n "$pid" ] || continue
    named=$((named + 1))
    now=$(awk '{ sub(/.*\) /, ""); print $20 }' "/proc/$pid/stat" 2>/dev/null || true)
    [ "$now" != "$start" ] || fail "job $id: pid $pid (started at tick $start), named by its pid file, still runs: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
  done < <(sed -n "s/^n1\.$id\.sampler\.pid: \([0-9]*\) \([0-9]*\)\$/\1 \2/p" "$seen" | sort -u)
  # The stop reached the sampler, which closed the job's row (the job's end state recorded).
  # (started_at and interval are the sampler's: faultguard's record of the job has its own row.)
  assert_eq "1|1" "$(spool_query n1 "SELECT CAST(interval AS INTEGER), ended_at IS NOT NULL FROM jobs WHERE job_id = $id AND started_at IS NOT NULL")" \
    "job $id's sampler row (its interval, closed)"
done
((named > 0)) || fail "no pid file of the jobs was seen while they ran (the watcher saw: $(head -c 300 "$seen"))"
! grep -q "^n1\.$off\.sampler\.pid:" "$seen" || fail "--gpu-telemetry=off job $off had a sampler pid file"
assert_eq 0 "$(spool_query n1 "SELECT COUNT(*) FROM jobs WHERE job_id = $off AND started_at IS NOT NULL")" "--gpu-telemetry=off job's sampler rows"
echo "short traced jobs: ${#ids[@]} stopped and cleaned up ($named pid-file processes checked gone); off: no sampler"
