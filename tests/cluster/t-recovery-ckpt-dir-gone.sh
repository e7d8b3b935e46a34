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
# after the epilog (seconds when idle, more on a loaded machine), or the node's record retrier
# later: read it once it is there (wait_record_nodes fails once no part of it is on its way).
wait_record_nodes "$id" "$(job_nodes "$id")"
rec=$(acme_records "$id" | tail -n 1)
assert_contains "$rec" "\"resumed_from\": \"(checkpoint search failed: cannot read $ckpt: No such file or directory" "job $id's record"
