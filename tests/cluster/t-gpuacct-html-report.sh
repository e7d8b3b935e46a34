#!/usr/bin/env bash
# gpuacct report --html renders in headless Chromium without console errors, offline, and its
# charts carry the numbers `gpuacct --json` prints: failure bars (GPU hours per reason), the
# GPU-hour weighted utilisation CDF per job type, idle GPU-hours by user and account, XIDs per
# node with their codes. It embeds aggregates, never a row per job.
. "$(dirname "$0")/lib.sh"

gpuacct() { "$ACME_BUILD_DIR/acct/gpuacct/gpuacct" --spool-dir "$(spool_dir)" "$@"; }
chrome=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chrome" ] || skip "chromium missing: scripts/install-deps installs it"

# GPU 1 of every node idle, the others busy; an XID 13 on each GPU after a second.
use_scenario <<'TOML'
[[gpu]]
minor = 0
util = 70
[[gpu]]
minor = 1
util = 0
[[gpu]]
minor = 2
util = 70
[[gpu]]
minor = 3
util = 70
[[xid]]
at = 1.0
minor = 0
code = 13
[[xid]]
at = 1.0
minor = 1
code = 13
[[xid]]
at = 1.0
minor = 2
code = 13
[[xid]]
at = 1.0
minor = 3
code = 13
TOML

# Each job ends once its sampler has seen its GPUs' XIDs (lib.sh, until_go), 3 s on at the least.
ok=$(submit -J eval-mmlu --gres=gpu:1 --gpu-telemetry=1 -o /dev/null --wrap "sleep 3; $(until_go "$ACME_TEST_TMP/go-ok")")
bad=$(submit -J pretrain-7b --gres=gpu:2 --gpu-telemetry=1 -o "$ACME_TEST_TMP/bad.out" \
  --wrap "sleep 3; $(until_go "$ACME_TEST_TMP/go-bad"); "'echo "KeyError: <script>alert(1)</script>" >&2; exit 1')
for j in ok bad; do
  wait_job_state "${!j}" RUNNING 60 "job ${!j} ($j)"
  wait_xid_seen "${!j}" "$(job_nodes "${!j}")" "$([ $j = ok ] && echo 1 || echo 2)"
  touch "$ACME_TEST_TMP/go-$j"
done
wait_job "$ok" 60 >/dev/null
assert_eq FAILED "$(wait_job "$bad" 60)" "failing job"

dir=$ACME_TEST_TMP
# Only this test's jobs: the cluster's other jobs have other scenarios.
gpuacct -j "$ok,$bad" report --html "$dir/report.html" >/dev/null 2>&1 || fail "gpuacct report failed"
for view in jobs failures nodes; do
  flag=--$view
  [ "$view" = jobs ] && flag=
  # shellcheck disable=SC2086
  gpuacct -j "$ok,$bad" --json $flag >"$dir/$view.json" 2>/dev/null || fail "gpuacct --json $flag failed"
done

# A fresh profile, no network: the page must need nothing from outside.
timeout 90 "$chrome" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
  --disable-sync --no-first-run --user-data-dir="$dir/profile" --enable-logging=stderr --v=0 \
  --virtual-time-budget=5000 --dump-dom "file://$dir/report.html" >"$dir/dom.html" 2>"$dir/chrome.err" ||
  fail "chromium did not render the report: $(tail -n 3 "$dir/chrome.err")"
if grep -E "CONSOLE|Uncaught" "$dir/chrome.err" >"$dir/console.txt"; then
  fail "console messages while rendering: $(head -n 3 "$dir/console.txt")"
fi

python3 - "$dir" "$ok" "$bad" <<'PY' || fail "the report's charts do not match gpuacct --json"
import json, sys
from html.parser import HTMLParser
from collections import defaultdict

d, ok, bad = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
marks, rendered, cells = [], [], defaultdict(list)
class P(HTMLParser):
    row = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html": rendered.append(a.get("data-rendered"))
        if a.get("class") in ("failure", "cdf", "xid"): marks.append((a["class"], a))
        if tag == "tr" and a.get("class", "").endswith("-row"):
            self.row = {}
            cells[a["class"]].append(self.row)
        if tag == "td" and self.row is not None:
            self.row.update({k[5:]: v for k, v in a.items() if k.startswith("data-")})
P().feed(open(d + "/dom.html").read())
def check(cond, what):
    if not cond:
        print("report:", what); sys.exit(1)
check(rendered == ["yes"], "the page's script did not finish (data-rendered=%s)" % rendered)
view = {v: json.load(open("%s/%s.json" % (d, v))) for v in ("jobs", "failures", "nodes")}
# Allocations only: -j lists the steps too (JobID "2.batch").
view["jobs"]["rows"] = [r for r in view["jobs"]["rows"] if isinstance(r["JobID"], int)]

bars = {a["data-reason"]: float(a["data-gpu-hours"]) for c, a in marks if c == "failure"}
want = {r["Reason"]: r["GPUHours"] for r in view["failures"]["rows"]}
check(bars == want, "failure bars %s != --failures %s" % (bars, want))
check("key_error" in bars, "the failed job's reason (key_error) is not charted")

# The CDF lines: per job type, the jobs with telemetry and their GPU-hours.
cdf = {a["data-type"]: (int(a["data-jobs"]), float(a["data-gpu-hours"])) for c, a in marks if c == "cdf"}
util = defaultdict(lambda: [0, 0.0])
for r in view["jobs"]["rows"]:
    if r["GPUUtil"] is not None:
        util[r["Type"] or "other"][0] += 1
        util[r["Type"] or "other"][1] += r["Elapsed"] * r["AllocGPUS"] / 3600.0
want = {t: (n, gh) for t, (n, gh) in util.items()}
# --json's Elapsed is whole seconds: allow a few GPU-seconds.
check(set(cdf) == set(want) and all(cdf[t][0] == want[t][0] and abs(cdf[t][1] - want[t][1]) < 0.002 for t in want),
      "CDF lines (jobs, GPU-hours) %s != --json %s" % (cdf, want))
check({"eval", "pretrain"} <= set(cdf), "both job types have a CDF line")

# Idle GPU time by user and by account: GPU 1 of each node is idle, for its job's whole run.
idle = defaultdict(float)
for r in view["jobs"]["rows"]:
    ids = [g for part in (r["GPUIDs"] or "").split(";") if ":" in part for g in part.split(":")[1].split(",")]
    idle[r["User"]] += ids.count("1") * r["Elapsed"] / 3600.0
check(idle.get("root", 0) > 0, "a job of root's had the idle GPU 1: %s" % dict(idle))
users = {c["name"]: c for c in cells["waste-users-row"]}
check("root" in users, "no row for root in the by-user table: %s" % list(users))
check(abs(float(users["root"]["idle-gpu-hours"]) - idle["root"]) < 2 / 3600.0,
      "root's idle GPU-hours %s != %s from --json" % (users["root"]["idle-gpu-hours"], idle["root"]))
accounts = {c["name"]: c for c in cells["waste-accounts-row"]}
check("acme" in accounts and accounts["acme"]["idle-gpu-hours"] == users["root"]["idle-gpu-hours"],
      "the by-account table: %s" % accounts)

xids = defaultdict(int)
for c, a in marks:
    if c == "xid": xids[a["data-node"]] += int(a["data-count"])
want = {r["NodeName"]: r["XIDs"] for r in view["nodes"]["rows"] if r["XIDs"]}
check(dict(xids) == want, "XID dots %s != --nodes XIDs %s" % (dict(xids), want))
check(sum(xids.values()) >= 3, "the three GPUs' XIDs are charted")
# The codes table: XID 13 (this test's), and as many events as the dots (the nodes' XIDs in
# the period, whichever job saw them).
codes = {c["code"]: int(c["count"]) for c in cells["xid-codes-row"]}
check("13" in codes and sum(codes.values()) == sum(xids.values()), "the XID codes table %s, dots %s" % (codes, dict(xids)))
PY
# The job's text is shown as text: the <script> in its log never became markup.
grep -q "<script>alert(1)</script>" "$dir/dom.html" && fail "user text became markup in the report"
exit 0
