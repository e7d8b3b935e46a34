#!/usr/bin/env bash
# A job over its time limit is diagnosed time_limit (Slurm's verdict, not the log's noise).
. "$(dirname "$0")/lib.sh"

id=$(submit -t 1 -o "$ACME_TEST_TMP/slow.out" --wrap 'echo "epoch 1 of 100"; sleep 600')
assert_eq TIMEOUT "$(wait_job "$id" 150)" "job state"
assert_eq "script|time_limit|none" "$(stored_diagnosis "$(job_nodes "$id")" "$id")" "stored diagnosis"
assert_contains "$(faultdiag --job "$id")" "time_limit" "faultdiag --job"
