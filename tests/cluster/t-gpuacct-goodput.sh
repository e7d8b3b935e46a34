#!/usr/bin/env bash
# A --auto-recover --ckpt-dir job whose GPU raises XID 79 after the job wrote a checkpoint: it is
# drained off n1, requeued, and resumes from that checkpoint on a healthy node. gpuacct -j ID
# --goodput reads both runs from slurmdbd and splits the job's wall time as a hand computation
# from slurmdbd's own fields (sacct -D) and the checkpoint's mtime does: queued before the first
# run, the work redone (checkpoint to the fault), the recovery (fault to running again), the
# rest kept, ETTR = kept / wall. The text view prints the same ETTR. gpuacct goodput over the
# period agrees with sacct -D, and from the node spools with slurmdbd where both know the pieces.
. "$(dirname "$0")/lib.sh"

G=$ACME_BUILD_DIR/acct/gpuacct/gpuacct
unset ACME_SPOOL_DIR

# Every GPU busy (no idle GPUs to split off); n1's GPU 0 raises XID 79 a second into the run.
use_uniform_scenario 95
scenarios=$ACME_MINICLUSTER_DIR/nvml/scenarios
{ cat "$scenarios/default.toml"; printf '[[xid]]\nat = 1.0\nminor = 0\ncode = 79\n'; } >"$scenarios/n1.toml"
on_exit 'rm -f "$ACME_MINICLUSTER_DIR/nvml/scenarios/n1.toml"; scontrol update nodename=n1 state=resume >/dev/null 2>&1'
# Three idle nodes, so the first run lands on n1.
all_nodes_idle

ckpt=$ACME_TEST_TMP/ckpt
mkdir -p "$ckpt" && chmod 755 "$ckpt"
# The checkpoint is written 2 s into the first run, the run fails once its sampler has seen the
# XID (lib.sh, until_go; 4 s later on a quiet machine): what it did since is redone.
go=$ACME_TEST_TMP/go
id=$(submit -N1 --gres=gpu:1 --gpu-telemetry=1 --auto-recover=1 --ckpt-dir="$ckpt" -o "$ACME_TEST_TMP/job.out" --wrap "
if [ \"\$ACME_RESTART_COUNT\" = 0 ]; then
  sleep 2; mkdir -p $ckpt/step-1 && touch $ckpt/step-1/.complete
  sleep 4; $(until_go "$go"); echo 'RuntimeError: NCCL communicator was aborted' >&2; exit 1
fi
sleep 3")
wait_job_state "$id" RUNNING 60 "job $id"
wait_xid_seen "$id" n1
touch "$go"
assert_eq COMPLETED "$(wait_job "$id" 180)" "job $id"
assert_eq 1 "$(job_field "$id" Restarts)" "restarts"
# Each run's record lands after its epilog: both runs' nodes.
first_node=$(sacct -j "$id" -D -X -n -P -o NodeList | head -n 1)
assert_eq n1 "$first_node" "the first run's node"
wait_record_nodes "$id" "$(job_field "$id" NodeList)"

# The hand computation: slurmdbd's times of each run (epoch seconds), the record's checkpoint
# time checked against the checkpoint directory itself.
SLURM_TIME_FORMAT=%s sacct -j "$id" -D -X -n -P -o Submit,Start,End,State >"$ACME_TEST_TMP/runs"
acme_records "$id" >"$ACME_TEST_TMP/records"
"$G" -j "$id" --goodput --json >"$ACME_TEST_TMP/goodput.json" 2>"$ACME_TEST_TMP/err" ||
  fail "gpuacct -j $id --goodput --json failed: $(cat "$ACME_TEST_TMP/err")"
python3 - "$ACME_TEST_TMP/runs" "$ACME_TEST_TMP/records" "$ACME_TEST_TMP/goodput.json" "$(stat -c %Y "$ckpt/step-1")" "$id" <<'PY' ||
import json, sys
runs = [l.split("|") for l in open(sys.argv[1]).read().split("\n") if l]
# The first run failed and faultguard's epilog requeued it: 22.05's slurmdbd writes its row
# REQUEUED, 26.05's keeps the state it ended in (FAILED); gpuacct reads either as a run.
assert [r[3] for r in runs] in (["REQUEUED", "COMPLETED"], ["FAILED", "COMPLETED"]), runs
(s0, b0, e0), (s1, b1, e1) = [tuple(float(x) for x in r[:3]) for r in runs]
records = [json.loads(l) for l in open(sys.argv[2]).read().split("\n") if l]
ckpt_ts = float(sys.argv[4])
second = records[1]["nodes"]
assert all(p.get("resumed_ckpt_ts") == ckpt_ts for p in second.values()), ("the record's checkpoint time", second, ckpt_ts)
want = {"wall_s": e1 - s0, "queued_s": b0 - s0, "lost_s": e0 - ckpt_ts, "recovery_s": b1 - e0,
        "stalled_s": 0, "idle_s": 0}
want["kept_s"] = (e0 - b0) - want["lost_s"] + (e1 - b1)
want["ettr"] = want["kept_s"] / want["wall_s"]
got = json.load(open(sys.argv[3]))["jobs"]
assert len(got) == 1 and got[0]["job_id"] == int(sys.argv[5]), got
g = got[0]["goodput"]
assert g["runs"] == 2 and g["failures"] == 1, g
for k, v in want.items():
    assert abs(g[k] - v) < 1e-6, (k, g[k], v)
assert want["lost_s"] > 0 and want["recovery_s"] > 0, want
PY
  fail "gpuacct -j $id --goodput against the hand computation: $(cat "$ACME_TEST_TMP/goodput.json")"

text=$("$G" -j "$id" --goodput) || fail "gpuacct -j $id --goodput failed"
ettr=$(python3 -c "import json; print('%.2f' % json.load(open('$ACME_TEST_TMP/goodput.json'))['jobs'][0]['goodput']['ettr'])")
assert_contains "$text" "ETTR             $ettr" "gpuacct -j $id --goodput"
assert_contains "$text" "Goodput of job $id (2 runs, 1 failure)" "gpuacct -j $id --goodput"

# Spools keep only a job's last run: goodput from them is refused, in one line.
out=$("$G" -j "$id" --goodput --spool-dir "$(spool_dir)" 2>&1) && fail "--goodput --spool-dir succeeded: $out"
assert_contains "$out" "gpuacct: error: --goodput reads every run of a job from slurmdbd" "--goodput with --spool-dir"

# The cluster's view over a period that starts with this job: GPU-hours handed out (every run's
# GPUs x its running time, by sacct -D over the same period) and this job's redone hour by cause.
start=$(head -n 1 "$ACME_TEST_TMP/runs" | cut -d'|' -f1)
S=$(date -d "@$start" +%Y-%m-%dT%H:%M:%S)
E=$(date -d "@$(($(date +%s) + 60))" +%Y-%m-%dT%H:%M:%S)
SLURM_TIME_FORMAT=%s sacct -D -X -n -P -S "$S" -E "$E" -o JobID,Start,End,AllocTRES >"$ACME_TEST_TMP/period"
"$G" goodput -S "$S" -E "$E" --json >"$ACME_TEST_TMP/cluster.json" 2>"$ACME_TEST_TMP/err" ||
  fail "gpuacct goodput -S $S failed: $(cat "$ACME_TEST_TMP/err")"
python3 - "$ACME_TEST_TMP/period" "$ACME_TEST_TMP/cluster.json" "$ACME_TEST_TMP/goodput.json" <<'PY' ||
import json, re, sys
handed = 0.0
for line in open(sys.argv[1]).read().split("\n"):
    if not line: continue
    job, start, end, tres = line.split("|")
    m = re.search(r"gres/gpu=(\d+)", tres)
    if m and start.isdigit() and end.isdigit():
        handed += int(m.group(1)) * (int(end) - int(start)) / 3600
c = json.load(open(sys.argv[2]))
assert abs(c["handed_out_gpu_h"] - handed) < 1e-6, (c["handed_out_gpu_h"], handed)
parts = c["kept_gpu_h"] + c["lost_gpu_h"] + c["stalled_gpu_h"] + c["idle_gpu_h"] + c["unsplit_gpu_h"]
assert abs(parts - handed) < 1e-6, (parts, handed)
lost = json.load(open(sys.argv[3]))["jobs"][0]["goodput"]["lost_s"] / 3600
infra = [x for x in c["causes"] if x["category"] == "infrastructure" and x["reason"] == "gpu_lost"]
assert infra and infra[0]["lost_gpu_h"] >= lost - 1e-9, (c["causes"], lost)
PY
  fail "gpuacct goodput against sacct -D over the period: $(cat "$ACME_TEST_TMP/cluster.json")"
assert_contains "$("$G" goodput -S "$S" -E "$E")" "GPU-hours handed out" "gpuacct goodput"

# The same period from the node spools: they hold this job's newest run and both runs'
# diagnoses, not the first run's times. Where both sources know the pieces they agree: the runs
# and failures, the newest run's GPU time (all kept: every GPU busy) and its wait (recovery:
# the run before it failed), from slurmdbd's own row of that run; the first run is "not held".
"$G" --spool-dir "$(spool_dir)" goodput -S "$S" -E "$E" --json >"$ACME_TEST_TMP/spool.json" 2>"$ACME_TEST_TMP/err" ||
  fail "gpuacct --spool-dir goodput failed: $(cat "$ACME_TEST_TMP/err")"
SLURM_TIME_FORMAT=%s sacct -D -X -n -P -S "$S" -E "$E" -o JobID,Submit,Start,End,AllocTRES >"$ACME_TEST_TMP/period-runs"
python3 - "$ACME_TEST_TMP/period-runs" "$ACME_TEST_TMP/cluster.json" "$ACME_TEST_TMP/spool.json" "$id" <<'PY' ||
import json, re, sys
runs = {}
for line in open(sys.argv[1]).read().split("\n"):
    if not line: continue
    job, submit, start, end, tres = line.split("|")
    m = re.search(r"gres/gpu=(\d+)", tres)
    runs.setdefault(job, []).append((float(submit), float(start), float(end), int(m.group(1)) if m else 0))
db, sp = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
for k in ("jobs", "runs", "failures"):
    assert db[k] == sp[k], (k, db[k], sp[k])
assert db["runs_not_held"] == 0 and db["jobs_partly_held"] == 0, db
# Only this job was requeued in the period: its first run is the one the spools do not hold.
assert sp["runs_not_held"] == 1 and sp["jobs_partly_held"] == 1, sp
newest = {job: r[-1] for job, r in runs.items()}
handed = sum(g * (e - b) for s, b, e, g in newest.values()) / 3600
assert abs(sp["handed_out_gpu_h"] - handed) < 1e-6, (sp["handed_out_gpu_h"], handed)
parts = sum(sp[k] for k in ("kept_gpu_h", "lost_gpu_h", "stalled_gpu_h", "idle_gpu_h", "unsplit_gpu_h"))
assert abs(parts - handed) < 1e-6, (parts, handed)
s1, b1, e1, g1 = newest[sys.argv[4]]
# Slurm gives the requeued run its own submit time; the epilog records what Slurm says.
assert abs(sp["recovery_h"] * 3600 - (b1 - s1)) < 2, (sp["recovery_h"] * 3600, b1 - s1)
# The newest run completed on busy GPUs: kept, as slurmdbd splits it; nothing redone is known.
assert sp["kept_gpu_h"] >= g1 * (e1 - b1) / 3600 - 1e-6 and sp["lost_gpu_h"] == 0, sp
# Every other job ran once: its hours are the same from both sources.
others_db = db["handed_out_gpu_h"] - sum(g * (e - b) for s, b, e, g in runs[sys.argv[4]]) / 3600
assert abs((sp["handed_out_gpu_h"] - g1 * (e1 - b1) / 3600) - others_db) < 1e-6, (sp, db)
PY
  fail "gpuacct --spool-dir goodput against slurmdbd's: $(cat "$ACME_TEST_TMP/spool.json")"
text=$("$G" --spool-dir "$(spool_dir)" goodput -S "$S" -E "$E") || fail "gpuacct --spool-dir goodput (text) failed"
assert_contains "$text" "not held: 1 earlier run of 1 requeued job" "gpuacct --spool-dir goodput"

# The HTML report of the same period draws the same split and this job's cause.
"$G" -S "$S" -E "$E" report --html "$ACME_TEST_TMP/report.html" >/dev/null 2>&1 || fail "gpuacct report --html failed"
chrome=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chrome" ] || skip "chromium missing: scripts/install-deps installs it"
timeout 90 "$chrome" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
  --disable-sync --no-first-run --user-data-dir="$ACME_TEST_TMP/profile" --enable-logging=stderr --v=0 \
  --virtual-time-budget=5000 --dump-dom "file://$ACME_TEST_TMP/report.html" >"$ACME_TEST_TMP/dom.html" 2>"$ACME_TEST_TMP/chrome.err" ||
  fail "chromium did not render the report: $(tail -n 3 "$ACME_TEST_TMP/chrome.err")"
python3 - "$ACME_TEST_TMP/dom.html" "$ACME_TEST_TMP/cluster.json" <<'PY' || fail "the report's goodput chart against gpuacct goodput --json"
import json, sys
from html.parser import HTMLParser
parts, causes = {}, {}
class P(HTMLParser):
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("class") == "goodput-part": parts[a["data-part"]] = float(a["data-gpu-hours"])
        if a.get("class") == "goodput-cause": causes[(a["data-category"], a["data-reason"])] = float(a["data-gpu-hours"])
P().feed(open(sys.argv[1]).read())
c = json.load(open(sys.argv[2]))
# The report read slurmdbd a moment later: the same finished jobs.
assert abs(parts["kept"] - c["kept_gpu_h"]) < 1e-6 and abs(parts["lost (redone)"] - c["lost_gpu_h"]) < 1e-6, (parts, c)
want = {(x["category"], x["reason"]): x["lost_gpu_h"] + x["stalled_gpu_h"] for x in c["causes"]}
assert set(causes) == set(want) and all(abs(causes[k] - want[k]) < 1e-6 for k in want), (causes, want)
assert ("infrastructure", "gpu_lost") in causes, causes
PY

# The report from the node spools draws gpuacct --spool-dir goodput's split, and says which runs
# it does not hold.
"$G" --spool-dir "$(spool_dir)" -S "$S" -E "$E" report --html "$ACME_TEST_TMP/spool-report.html" >/dev/null 2>&1 ||
  fail "gpuacct --spool-dir report --html failed"
timeout 90 "$chrome" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
  --disable-sync --no-first-run --user-data-dir="$ACME_TEST_TMP/profile" --enable-logging=stderr --v=0 \
  --virtual-time-budget=5000 --dump-dom "file://$ACME_TEST_TMP/spool-report.html" >"$ACME_TEST_TMP/spool-dom.html" 2>"$ACME_TEST_TMP/chrome.err" ||
  fail "chromium did not render the spool report: $(tail -n 3 "$ACME_TEST_TMP/chrome.err")"
python3 - "$ACME_TEST_TMP/spool-dom.html" "$ACME_TEST_TMP/spool.json" <<'PY' || fail "the spool report's goodput chart against gpuacct --spool-dir goodput --json"
import json, sys
from html.parser import HTMLParser
parts, notes = {}, []
class P(HTMLParser):
    def __init__(self):
        super().__init__()
        self.in_note = False
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("class") == "goodput-part": parts[a["data-part"]] = float(a["data-gpu-hours"])
        self.in_note = a.get("class") == "goodput-not-held"
    def handle_data(self, data):
        if self.in_note: notes.append(data)
P().feed(open(sys.argv[1]).read())
c = json.load(open(sys.argv[2]))
for name, key in (("kept", "kept_gpu_h"), ("lost (redone)", "lost_gpu_h"), ("stalled", "stalled_gpu_h"),
                  ("GPUs idle", "idle_gpu_h"), ("not split", "unsplit_gpu_h")):
    assert abs(parts[name] - c[key]) < 1e-6, (name, parts, c)
assert notes and notes[0].startswith("not held: 1 earlier run(s) of 1 requeued job(s)"), notes
PY
