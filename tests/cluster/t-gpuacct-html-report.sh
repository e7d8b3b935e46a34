#!/usr/bin/env bash
# gpuacct report --html renders in headless Chromium without console errors, offline, and its
# charts carry the numbers `gpuacct --json` prints: failure bars (GPU hours per reason), the
# utilisation CDF per job type, XIDs per node.
. "$(dirname "$0")/lib.sh"

gpuacct() { "$ACME_BUILD_DIR/acct/gpuacct/gpuacct" --spool-dir "$(spool_dir)" "$@"; }
chrome=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chrome" ] || skip "chromium missing: scripts/install-deps installs it"

use_uniform_scenario 70 13

ok=$(submit -J eval-mmlu --gres=gpu:1 --gpu-telemetry=1 -o /dev/null --wrap 'sleep 3')
bad=$(submit -J pretrain-7b --gres=gpu:2 --gpu-telemetry=1 -o "$ACME_TEST_TMP/bad.out" \
  --wrap 'sleep 3; echo "KeyError: <script>alert(1)</script>" >&2; exit 1')
wait_job "$ok" 60 >/dev/null
assert_eq FAILED "$(wait_job "$bad" 60)" "failing job"

dir=$ACME_TEST_TMP
gpuacct -S now-1hours report --html "$dir/report.html" >/dev/null 2>&1 || fail "gpuacct report failed"
for view in jobs failures nodes; do
  flag=--$view
  [ "$view" = jobs ] && flag=
  # shellcheck disable=SC2086
  gpuacct -S now-1hours --json $flag >"$dir/$view.json" 2>/dev/null || fail "gpuacct --json $flag failed"
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
marks, rendered = [], []
class P(HTMLParser):
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html": rendered.append(a.get("data-rendered"))
        if a.get("class") in ("failure", "cdf", "xid"): marks.append((a["class"], a))
P().feed(open(d + "/dom.html").read())
def check(cond, what):
    if not cond:
        print("report:", what); sys.exit(1)
check(rendered == ["yes"], "the page's script did not finish (data-rendered=%s)" % rendered)
view = {v: json.load(open("%s/%s.json" % (d, v))) for v in ("jobs", "failures", "nodes")}

bars = {a["data-reason"]: float(a["data-gpu-hours"]) for c, a in marks if c == "failure"}
want = {r["Reason"]: r["GPUHours"] for r in view["failures"]["rows"]}
check(bars == want, "failure bars %s != --failures %s" % (bars, want))
check("key_error" in bars, "the failed job's reason (key_error) is not charted")

cdf = {a["data-type"]: json.loads(a["data-values"]) for c, a in marks if c == "cdf"}
util = defaultdict(list)
for r in view["jobs"]["rows"]:
    if r["GPUUtil"] is not None: util[r["Type"] or "other"].append(r["GPUUtil"])
check(cdf == {t: sorted(v) for t, v in util.items()}, "CDF lines %s != --json GPUUtil %s" % (cdf, dict(util)))
check({"eval", "pretrain"} <= set(cdf), "both job types have a CDF line")

xids = defaultdict(int)
for c, a in marks:
    if c == "xid": xids[a["data-node"]] += int(a["data-count"])
want = {r["NodeName"]: r["XIDs"] for r in view["nodes"]["rows"] if r["XIDs"]}
check(dict(xids) == want, "XID dots %s != --nodes XIDs %s" % (dict(xids), want))
check(sum(xids.values()) >= 3, "the three GPUs' XIDs are charted")
PY
# The job's text is shown as text: the <script> in its log never became markup.
grep -q "<script>alert(1)</script>" "$dir/dom.html" && fail "user text became markup in the report"
exit 0
