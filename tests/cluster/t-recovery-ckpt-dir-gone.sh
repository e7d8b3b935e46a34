#!/usr/bin/env bash
# A --ckpt-dir that is gone when the job starts (unmounted on the node, removed) is not a fresh
# start: the job gets ACME_RESUME_ERROR naming the directory and why, and the run's record says
# the search failed. An existing empty directory is a fresh start with no error.
. "$(dirname "$0")/lib.sh"

ckpt=$ACME_TEST_TMP/ckpt
mkdir -p "$ckpt"
chmod 777 "$ckpt"
out=$ACME_TEST_TMP/job.out
script='echo "resume=[$ACME_RESUME_CKPT] error=[$ACME_RESUME_ERROR]"'

# Fresh start: the directory is there and empty.
id=$(submit -N1 --ckpt-dir="$ckpt" -o "$out" --wrap "$script")
assert_eq COMPLETED "$(wait_job "$id" 60)" "job $id"
assert_eq "resume=[] error=[]" "$(cat "$out")" "fresh start's environment"

# Gone by the time the job starts (sbatch checked that it existed).
id=$(submit -N1 -H --ckpt-dir="$ckpt" -o "$out" --wrap "$script")
rmdir "$ckpt"
scontrol release "$id"
assert_eq COMPLETED "$(wait_job "$id" 60)" "job $id"
assert_eq "resume=[] error=[cannot read $ckpt: No such file or directory (not mounted on this node?)]" "$(cat "$out")" \
  "environment of a job whose checkpoint directory is gone"
# The run's record in slurmdbd says the search failed, and why. A detached publisher writes it
# after the epilog (seconds when idle, more on a loaded machine; its alarm ends it 60 s after it
# started): read the record once it is there, or once no publisher of this job is left.
for _ in $(seq 1 400); do
  rec=$(acme_records "$id" | tail -n 1)
  [ "$rec" != null ] && [ -n "$rec" ] && break
  publishing=$(pgrep -f -- "--publish $(spool_dir)/.*/n[0-9]*\.$id\.0\.record" || true)
  [ -z "$publishing" ] && [ "${seen_publisher:-}" = done ] && break
  [ -z "$publishing" ] && seen_publisher=done  # one more look after it exited
  sleep 0.5
done
assert_contains "$rec" "\"resumed_from\": \"(checkpoint search failed: cannot read $ckpt: No such file or directory" "job $id's record"
