#!/usr/bin/env bash
# A traced job requeued by an admin (`scontrol requeue`) while it runs, then completing: sacct
# keeps a row per run. `gpuacct -D` lists the same runs as `sacct -D` (job id, state, start, end,
# nodes, exit code; the first run REQUEUED), each with the GPU figures of its own run; without
# -D both show the job once, its last run speaking for it, and gpuacct counts the requeue in
# Restarts. --json lists a job object per run under -D.
. "$(dirname "$0")/lib.sh"

G=$ACME_BUILD_DIR/acct/gpuacct/gpuacct
unset ACME_SPOOL_DIR

# The first run's GPUs busy at 30 %, the second's at 90 % (the fake driver reads its scenario
# when the run's sampler starts): each -D row must carry its own run's figures.
use_uniform_scenario 30
id=$(submit -J requeue-acct -N1 --gres=gpu:2 --gpu-telemetry=1 --requeue -o /dev/null --wrap \
  'if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then sleep 300; else sleep 3; fi')
deadline=$((SECONDS + 60))
until [ "$(job_field "$id" JobState)" = RUNNING ]; do
  ((SECONDS < deadline)) || fail "job $id not running in 60 s: $(job_field "$id" JobState)"
  sleep 0.3
done
# Samples of the first run on each of its GPUs before it is requeued (its sampler's first ones
# come when it is up, however loaded the node: the run sleeps until it is requeued).
first_node=$(job_nodes "$id")
until [ "$(spool_query "$first_node" "SELECT COUNT(DISTINCT gpu) FROM gpu_samples WHERE job_id = $id AND util_gpu IS NOT NULL" 2>/dev/null)" = 2 ]; do
  [ "$(job_field "$id" JobState)" = RUNNING ] || fail "job $id left RUNNING before its GPUs had samples: $(job_field "$id" JobState)"
  sleep 0.3
done
scontrol requeue "$id" || fail "scontrol requeue $id refused"
# Slurm holds a requeued job back for a while (BeginTime, set when the requeue completes, after
# the first run's epilog): pending again, the first run's epilog is over.
deadline=$((SECONDS + 60))
until [ "$(job_field "$id" JobState)" = PENDING ]; do
  ((SECONDS < deadline)) || fail "job $id not pending again in 60 s after its requeue: $(job_field "$id" JobState)"
  sleep 0.3
done
# The first run's record: the epilog's publisher writes it into the run's row (the node's
# retrier tries again when slurmdbd does not take it), or its line says why not.
wait_run_record_nodes first "$id" "$first_node"
use_uniform_scenario 90
# The second run on another node: a node's spool sums a job's samples over every run it held
# there (the record of a second run on the same node carries the first run's samples too), and
# this test is about gpuacct telling the runs apart.
assert_eq "$first_node" "$(sacct -j "$id" -D -X -n -P -o NodeList | head -n 1)" "the first run's node in slurmdbd"
scontrol update JobId="$id" ExcNodeList="$first_node" || fail "cannot keep job $id off $first_node"
# Then let it start now. Set before it was pending again, the requeue's own BeginTime (120 s on)
# would replace it.
scontrol update JobId="$id" StartTime=now >/dev/null 2>&1 || true
assert_eq COMPLETED "$(wait_job "$id" 120)" "job $id"
assert_eq 1 "$(job_field "$id" Restarts)" "restarts"
# The second run's record lands after its epilog.
wait_record_nodes "$id" "$(job_nodes "$id")"
assert_eq 2 "$(acme_records "$id" | grep -vc '^null$')" "records of job $id's runs"
# Each record names its own run: the first run's epilog sees SLURM_JOB_RESTART_COUNT (and
# slurmctld's count) already at the next run's after the admin's requeue; its record says 0.
assert_eq "0 1" "$(acme_records "$id" | python3 -c 'import json,sys; print(*(json.loads(l)["restart"] for l in sys.stdin))')" \
  "the restart counts in job $id's records"
# The first run's diagnosis (its record's, if its epilog diagnosed it) is on its own row under
# -D: gpuacct ties a record's diagnosis to the run its record names.
first_reason=$(acme_records "$id" | sed -n 1p | python3 -c '
import json, sys
r = json.load(sys.stdin)
print(next((p["diagnosis"]["reason"] for p in r["nodes"].values() if isinstance(p.get("diagnosis"), dict)), ""))')
echo "the first run's diagnosis: ${first_reason:-none}"

fields=JobID,State,Start,End,NodeList,ExitCode
# -D: a row per run, the same rows as sacct -D.
want=$(sacct -j "$id" -D -X -n -P -o "$fields")
assert_eq 2 "$(grep -c . <<<"$want")" "sacct -D's rows for job $id"
assert_contains "$(head -n 1 <<<"$want")" "|REQUEUED|" "sacct -D's first run"
got=$("$G" -j "$id" -D -X -n -P -o "$fields" 2>"$ACME_TEST_TMP/err")
assert_eq "$want" "$got" "gpuacct -j $id -D against sacct -D"
assert_eq "" "$(cat "$ACME_TEST_TMP/err")" "stderr of gpuacct -D"

# Without -D: the job once, as sacct shows it.
want=$(sacct -j "$id" -X -n -P -o "$fields")
assert_eq 1 "$(grep -c . <<<"$want")" "sacct's rows for job $id without -D"
got=$("$G" -j "$id" -X -n -P -o "$fields")
assert_eq "$want" "$got" "gpuacct -j $id against sacct"

# Each run's own GPU figures and run number under -D; the last run's, and the count, without.
assert_eq "$id|REQUEUED|0|30.0
$id|COMPLETED|1|90.0" "$("$G" -j "$id" -D -X -n -P -o JobID,State,Restarts,GPUUtil)" "gpuacct -D's GPU figures per run"
assert_eq "$id|COMPLETED|1|90.0" "$("$G" -j "$id" -X -n -P -o JobID,State,Restarts,GPUUtil)" "gpuacct's row without -D"
assert_eq "$id|REQUEUED|0|$first_reason
$id|COMPLETED|1|" "$("$G" -j "$id" -D -X -n -P -o JobID,State,Restarts,Reason)" "gpuacct -D's restarts and reasons per run"

# The table (sacct's fixed widths, on the commands' one renderer) has a line per run too.
table=$("$G" -j "$id" -D -X -o JobID,State%-10,GPUUtil)
assert_eq 4 "$(grep -c . <<<"$table")" "gpuacct -D's table lines (header, dashes, two runs): $table"
assert_contains "$table" "REQUEUED" "the table's first run"

# --json: a job object per run, in order, each with its own acme row.
"$G" -j "$id" -D --json >"$ACME_TEST_TMP/d.json" || fail "gpuacct -D --json failed"
python3 - "$ACME_TEST_TMP/d.json" "$id" <<'PY' || fail "gpuacct -j $id -D --json: $(cat "$ACME_TEST_TMP/d.json")"
import json, sys
j = json.load(open(sys.argv[1]))
runs = [x for x in j["jobs"] if x["job_id"] == int(sys.argv[2])]
assert [x["state"]["current"] for x in runs] == ["REQUEUED", "COMPLETED"], runs
assert [x["acme"]["GPUUtil"] for x in runs] == [30.0, 90.0], runs
assert runs[0]["time"]["end"] <= runs[1]["time"]["start"], runs
PY
