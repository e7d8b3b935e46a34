#!/usr/bin/env bash
# gpuacct and faultdiag read Slurm's accounting by default: a failed 2-node traced job's acme
# record (both nodes' parts, in its AdminComment in slurmdbd) is what `gpuacct -j ID` and
# `faultdiag --job ID` show, with no node spool to read. slurmdbd's PrivateData decides who sees
# it: root and the job's user do; another user (nobody) gets nothing of it, not even in an error.
. "$(dirname "$0")/lib.sh"

G=$ACME_BUILD_DIR/acct/gpuacct/gpuacct
F=$ACME_BUILD_DIR/acct/faultdiag/faultdiag
# Neither command may find the minicluster's spools: no --spool-dir, no ACME_SPOOL_DIR (the
# compiled-in default is not the minicluster's spool directory).
unset ACME_SPOOL_DIR
as() { # user command...: with the harness's SLURM_CONF
  local u=$1
  shift
  runuser -u "$u" -- env SLURM_CONF="$SLURM_CONF" "$@"
}

u=$(test_user)
use_uniform_scenario 70
d=$ACME_TEST_TMP/job
mkdir -p "$d"
chmod 777 "$d"
id=$(submit --uid="$u" -J llm-sft-acct -N2 --gres=gpu:2 --gpu-telemetry=1 -o "$d/job.out" --wrap \
  'srun -l bash -c "echo GPUS \$SLURMD_NODENAME \$SLURM_JOB_GPUS"; sleep 7; python3 -c "import sys; print(\"loading\"); int(\"x\")"')
# The batch step outlives JobAcctGatherFrequency=task=5 (sleep 7), so Slurm has sampled its
# MaxRSS at least once: a 5 s step may end before its first sample and have none in slurmdbd.
# Two plain jobs beside it, for sacct's filters (issue 17): a name, a node, time limits.
t0=$(date +%Y-%m-%dT%H:%M:%S -d '-2 seconds')
k1=$(submit -J acct-k1 -N1 -w n3 -t 7 -o /dev/null --wrap true)
k2=$(submit -J acct-k2 -N1 -t 1:00:00 -o /dev/null --wrap true)
assert_eq FAILED "$(wait_job "$id" 120)" "job $id"

# What each node's GPUs were: "n1:0,1;n2:0,1", as gpuacct's GPUIDs field writes it.
want_ids=$(awk '$2 == "GPUS" {print $3 ":" $4}' "$d/job.out" | sort -u | while IFS=: read -r n g; do
  echo "$n:$(tr ',' '\n' <<<"$g" | sort -n | paste -sd,)"
done | paste -sd';')
[ -n "$want_ids" ] || fail "no GPU list in the job's output: $(cat "$d/job.out")"
[[ $want_ids == *";"* ]] || fail "the job ran on one node only: $want_ids"

fields=JobID,User,State,NNodes,GPUIDs,GPUUtil,Reason,MissingNodes
want="$id|$u|FAILED|2|$want_ids|70.0|value_error|"
# The job's end reaches slurmdbd through slurmctld's queue, the epilogs' parts after the job
# ends: wait for both (each while it is on its way), then the complete record.
wait_slurmdbd_ends "$id"
wait_record_nodes "$id" $(job_nodes "$id")
got=$("$G" -X -j "$id" -P -n -o "$fields" 2>"$ACME_TEST_TMP/root.err")
[ "$got" = "$want" ] || fail "gpuacct -j $id as root: expected '$want', got '$got' ($(cat "$ACME_TEST_TMP/root.err"))"
assert_eq "" "$(cat "$ACME_TEST_TMP/root.err")" "stderr of gpuacct -j $id"

# The source is named: --json says slurmdbd, and validates against the schema.
"$G" -j "$id" --json >"$ACME_TEST_TMP/root.json" 2>/dev/null || fail "gpuacct --json failed"
python3 - "$ACME_TEST_TMP/root.json" "$id" <<'PY' || fail "gpuacct -j $id --json: $(cat "$ACME_TEST_TMP/root.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["source"] == "slurmdbd", j["source"]
rows = [r for r in j["rows"] if str(r["JobID"]) == sys.argv[2]]
assert len(rows) == 1, rows
r = rows[0]
assert r["Samples"] and r["Samples"] > 0, r
assert r["GPUMemMax"] is not None and r["AllocGPUS"] == 4, r
assert r["MissingNodes"] is None, r
assert r["Category"] == "framework", r
# seff's numbers from slurmdbd's TRES usage: CPUs held, CPU efficiency, MaxRSS against ReqMem.
assert r["AllocCPUS"] and r["AllocCPUS"] >= 2, r
assert r["CPUEff"] is not None and 0 <= r["CPUEff"] <= 100, r
assert r["MaxRSS"] and r["MaxRSS"] > 0 and r["ReqMem"] and r["MaxRSS"] < r["ReqMem"], r
PY
if python3 -c 'import jsonschema' 2>/dev/null; then
  python3 -c 'import json, sys, jsonschema; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' \
    "$ACME_TEST_TMP/root.json" "$ACME_SRC_DIR/acct/gpuacct/gpuacct.schema.json" || fail "--json does not validate"
fi

# The HTML report names its source too.
"$G" -j "$id" report --html "$ACME_TEST_TMP/report.html" >/dev/null 2>&1 || fail "gpuacct report --html failed"
assert_contains "$(cat "$ACME_TEST_TMP/report.html")" '"source":"slurmdbd"' "the HTML report's source"

# Forced, with ACME_SPOOL_DIR at an empty directory: the same row, from slurmdbd.
empty=$ACME_TEST_TMP/empty-spool
mkdir -p "$empty"
assert_eq "$want" "$(ACME_SPOOL_DIR=$empty "$G" --source slurmdbd -X -j "$id" -P -n -o "$fields" 2>&1)" "--source slurmdbd"
# ACME_SPOOL_DIR alone means the spools (the old behaviour): an empty one has no such job.
assert_eq "" "$(ACME_SPOOL_DIR=$empty "$G" -X -j "$id" -P -n -o JobID 2>/dev/null)" "ACME_SPOOL_DIR at an empty directory"
# --source spool with --spool-dir at the minicluster's spools still reads them.
assert_eq "$id|FAILED" "$("$G" --source spool --spool-dir "$(spool_dir)" -X -j "$id" -P -n -o JobID,State 2>/dev/null)" \
  "--source spool"
out=$("$G" --source slurmdbd --spool-dir "$empty" -j "$id" 2>&1)
assert_eq 1 "$?" "exit of --source slurmdbd with --spool-dir"
assert_eq 1 "$(wc -l <<<"$out")" "lines of its error"

# The job's user sees it, from any node: only slurmdbd is asked.
assert_eq "$want" "$(as "$u" "$G" -X -j "$id" -P -n -o "$fields" 2>&1)" "gpuacct -j $id as $u"
assert_contains "$(as "$u" "$G" -X -S now-1hours -P -n -o JobID,Reason 2>&1)" "$id|value_error" "gpuacct as $u, no -j"

# Another user: not shown, with or without -a, and nothing of it on either stream.
for args in "-X -j $id -P -n" "-a -X -S now-1hours -P -n" "-a -j $id --json"; do
  # shellcheck disable=SC2086
  out=$(as nobody "$G" $args 2>&1)
  status=$?
  assert_eq 0 "$status" "exit of gpuacct $args as nobody (as sacct: an empty answer)"
  case $out in *value_error* | *llm-sft-acct* | *"$u"* | *"|$id|"* | *"\"$id\""*) fail "gpuacct $args as nobody shows the job: $out" ;; esac
done
assert_contains "$(as nobody "$G" -a -j "$id" --json 2>/dev/null)" '"rows": []' "gpuacct --json as nobody"

# faultdiag --job: the stored diagnosis, from slurmdbd, for root and the job's user.
for who in root "$u"; do
  out=$(as "$who" "$F" --job "$id" 2>&1) || fail "faultdiag --job $id as $who failed: $out"
  assert_contains "$out" "cause:      value_error (framework)" "faultdiag --job $id as $who"
  assert_contains "$out" "from slurmdbd" "faultdiag --job $id as $who: the source"
  assert_contains "$out" "ValueError" "faultdiag --job $id as $who: the evidence"
done
out=$(as nobody "$F" --job "$id" 2>"$ACME_TEST_TMP/nobody.err")
status=$?
[ "$status" -ne 0 ] || fail "faultdiag --job $id as nobody exited 0: $out"
assert_eq "" "$out" "stdout of faultdiag --job $id as nobody"
err=$(cat "$ACME_TEST_TMP/nobody.err")
assert_eq 1 "$(wc -l <<<"$err")" "stderr lines of faultdiag --job $id as nobody"
assert_contains "$err" "job $id is not in Slurm's accounting, or not yours to see" "faultdiag --job $id as nobody"
case $err in *value_error* | *int\(* | *"$u"*) fail "faultdiag as nobody leaks the job: $err" ;; esac

# --- sacct's options (issue 17), against sacct on the same slurmdbd -------------------------
assert_eq COMPLETED "$(wait_job "$k1" 60)" "job $k1"
assert_eq COMPLETED "$(wait_job "$k2" 60)" "job $k2"
wait_slurmdbd_ends "$k1" "$k2"

# sacct's own fields print as sacct prints them (ReqMem converted only while exact, TotalCPU
# with milliseconds below an hour: the steps' sum, as on sacct's job line when the steps are
# read, i.e. without -X), for the failed job and the plain ones alike.
for j in "$id" "$k1" "$k2"; do
  assert_eq "$(sacct -n -P -j "$j" -o JobID,ReqMem,TotalCPU,Elapsed | grep "^$j|")" \
    "$("$G" -X -n -P -j "$j" -o JobID,ReqMem,TotalCPU,Elapsed 2>&1)" "gpuacct's ReqMem, TotalCPU and Elapsed of job $j against sacct's job line"
done

# faultdiag --job on a job that completed (slurmdbd has its end, above): an answer (exit 0).
assert_eq COMPLETED "$(sacct -X -n -P -o State -j "$k1,$k2" | sort -u)" "the states slurmdbd has of $k1 and $k2"
out=$("$F" --job "$k1" 2>&1) || fail "faultdiag --job $k1 (COMPLETED) exited $?: $out"
assert_eq "job $k1 COMPLETED 0:0: nothing to diagnose" "$out" "faultdiag --job on a completed job"
cluster=$(scontrol show config | sed -n 's/^ClusterName *= *//p')
assoc=$(sacct -X -n -P -o AssocID -j "$k1")
# The same job set as sacct for each filter (sacct's -k alone is an exact limit, -k -K a range).
for f in "-N n3" "--name acct-k1,llm-sft-acct" "-k 7" "-k 7 -K 60" "-k 60 -K 2:00:00" "-K 7" "-q normal" \
  "-g root" "-x $assoc" "-M $cluster" "-M nosuchcluster" "-L" "-D"; do
  # shellcheck disable=SC2086
  want=$(sacct -X -n -P -o JobID -S "$t0" $f | sort -n | paste -sd,)
  # shellcheck disable=SC2086
  got=$("$G" -X -n -P -o JobID -S "$t0" $f 2>&1 | sort -n | paste -sd,)
  assert_eq "$want" "$got" "gpuacct $f (as sacct $f)"
done
[[ $(sacct -X -n -P -o JobID -S "$t0" -N n3 | paste -sd,) == *$k1* ]] || fail "sacct -N n3 lacks $k1"
# Output conventions: --delimiter with -P and -p, -b, and -o's fields as sacct prints them.
o=JobID,JobName,Partition,State,ExitCode
for f in "-P --delimiter=; -o $o" "-p --delimiter=:: -o $o" "-b -P" "-P -o JobID,JobName,Partition,State,ExitCode,NNodes"; do
  # shellcheck disable=SC2086
  assert_eq "$(sacct -X $f -j "$k1,$k2")" "$("$G" -X $f -j "$k1,$k2" 2>&1)" "gpuacct $f"
done
grep -q '^gpuacct ' <<<"$("$G" -V)" || fail "gpuacct -V"
# --json: each job's object has sacct's keys where both know the field, with sacct's values.
sacct -j "$k1,$id" --json >"$ACME_TEST_TMP/sacct.json"
"$G" -j "$k1,$id" --json >"$ACME_TEST_TMP/gpuacct.json" 2>/dev/null || fail "gpuacct --json"
# sacct 22.05's --json writes exit_code 0 even for a failed job: its -o ExitCode is the truth.
exits=$(sacct -X -n -P -o JobID,ExitCode -j "$k1,$id" | paste -sd' ')
python3 - "$ACME_TEST_TMP/sacct.json" "$ACME_TEST_TMP/gpuacct.json" "$exits" <<'PY' || fail "gpuacct --json against sacct --json"
import json, sys
s = {j["job_id"]: j for j in json.load(open(sys.argv[1]))["jobs"]}
def plain(v):
    # sacct from 23.11 on writes a number that may be unset or infinite as {set, infinite,
    # number} (26.05's time.limit); 22.05 wrote the number, or null. gpuacct writes the number.
    if isinstance(v, dict) and set(v) == {"set", "infinite", "number"}:
        return v["number"] if v["set"] and not v["infinite"] else None
    return v
g = json.load(open(sys.argv[2]))
assert set(["meta", "errors", "jobs"]) <= set(g), list(g)
for job in g["jobs"]:
    want = s[job["job_id"]]
    extra = set(job) - set(want) - {"acme"}
    assert not extra, f"keys sacct does not have: {extra}"
    for k in ["account", "allocation_nodes", "cluster", "group", "job_id", "name", "nodes", "partition", "qos", "user"]:
        assert job[k] == plain(want[k]), (k, job[k], want[k])
    for k in ["account", "cluster", "user"]:
        # Slurm 26.05's sacct fills only the association's id and cluster (it does not look the
        # association up); gpuacct fills the job's own account and user on every release.
        theirs = want["association"][k] or want[k]
        assert job["association"][k] == theirs, (k, job["association"][k], want["association"])
    for k in ["start", "end", "submission", "limit", "elapsed"]:
        assert job["time"][k] == plain(want["time"][k]), (k, job["time"][k], want["time"][k])
    # 22.05: "COMPLETED"; from 23.02 on a list of the state and its flags, ["COMPLETED"].
    current = want["state"]["current"]
    assert job["state"]["current"] == (current[0] if isinstance(current, list) else current), (job["state"], current)
    # 26.05's sacct always writes exit_code.signal (22.05 only for a signalled job) and says
    # ERROR where 22.05 said FAILED; gpuacct keeps 22.05's.
    assert set(job["exit_code"]) <= set(want["exit_code"]), (job["exit_code"], want["exit_code"])
    code = dict(e.split("|") for e in sys.argv[3].split())[str(job["job_id"])]
    assert job["exit_code"]["return_code"] == int(code.split(":")[0]), (job["exit_code"], code)
    assert "JobID" in job["acme"] and "GPUUtil" in job["acme"], job["acme"]
PY
if python3 -c 'import jsonschema' 2>/dev/null; then
  python3 -c 'import json, sys, jsonschema; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' \
    "$ACME_TEST_TMP/gpuacct.json" "$ACME_SRC_DIR/acct/gpuacct/gpuacct.schema.json" || fail "--json (sacct layout) does not validate"
fi
# The job view: per node and GPU, the time limit against the run time, the notes.
out=$("$G" -j "$id" --detail 2>&1) || fail "gpuacct -j $id --detail: $out"
# Each node's line (with its straggler score on a multi-node job), then its GPUs' lines.
for n in $(tr ';' '\n' <<<"$want_ids" | cut -d: -f1); do
  grep -q '^    GPU ' <<<"$(grep -A1 -E "^  $n(\$|  slowness [0-9.]+ )" <<<"$out")" || fail "--detail: node $n and its GPU lines missing: $out"
done
assert_contains "$out" "util 70.0% mean" "--detail: the GPUs' utilisation"
limit=$(sacct -X -n -P -o Timelimit -j "$id")
assert_contains "$out" "Time Limit: $limit (" "--detail: the time limit"
assert_contains "$out" "Notes" "--detail: notes"
# The failed run's cause, with its log line, as faultdiag --job says it (issue 38).
assert_contains "$out" "  cause:    value_error (framework)" "--detail: the failure's cause"
grep -qE "^  evidence: line [0-9]+: .*ValueError" <<<"$out" || fail "--detail: no evidence line with the ValueError: $out"
assert_contains "$out" "  recovery: none taken" "--detail: the recovery taken"
assert_contains "$("$G" -j "$id" -l 2>&1)" "GPU Job Statistics" "gpuacct -j $id -l"

