#!/usr/bin/env bash
# evalsched follow: a training run (this script, as the test user) saves checkpoints under its
# directory while evalschedd watches it. The two complete ones are evaluated, each once, in
# order; a half-written one (no .complete yet) and one the user cannot read (root's, mode 700:
# complete only to root's eyes, so the scan ran as the user) are not; kill -9 of evalschedd
# between two saves changes nothing. The report shows both steps, and its HTML a line per
# dataset over them, rendered in headless Chromium. evalsched cancel fID stops the follow.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/evalsched-lib.sh"
user=$(test_user)
es_setup
cat >>"$ES"/evalsched.conf <<CONF
checkpoint_rules=$ACME_SRC_DIR/etc/checkpoints.toml
follow_helper=$ACME_BUILD_DIR/evalsched/daemon/evalsched-ckpt-scan
follow_interval=1
CONF
cat >"$ES"/two.toml <<TOML
[suite]
name = "two"
command = "$ACME_SRC_DIR/scripts/fake-eval --checkpoint {checkpoint} --task {dataset} --out {output} --fail-dir $ES/fail"
gpus = 1
[[dataset]]
name = "mmlu"
kind = "multiple_choice"
prior = "5s"
[[dataset]]
name = "gsm8k"
kind = "generation"
prior = "5s"
TOML
chmod 644 "$ES"/two.toml
run=$ES/ckpt/run9
mkdir -p "$run"
chown "$user" "$run"
es_start
chmod 666 "$EVALSCHED_SOCKET"
as_user() { runuser -u "$user" -- env EVALSCHED_SOCKET="$EVALSCHED_SOCKET" "$@"; }
save() { # step [complete]: a checkpoint as the training job writes it, the marker last
  as_user mkdir -p "$run/step-$1"
  as_user sh -c "head -c 100000 /dev/urandom >'$run/step-$1/model.bin'; head -c 300000 /dev/urandom >'$run/step-$1/optimizer.pt'
    echo '{}' >'$run/step-$1/config.json'; mkdir '$run/step-$1/global_step$1'
    head -c 200000 /dev/urandom >'$run/step-$1/global_step$1/mp_rank_00_optim_states.pt'"
  [ "${2:-}" = complete ] && as_user touch "$run/step-$1/.complete"
  return 0
}
decided() { es_sql "SELECT COUNT(*) FROM follow_checkpoints WHERE follow = $fid AND step = $1"; }
wait_decided() { # step
  local deadline=$((SECONDS + 120))
  while [ "$(decided "$1")" != 1 ]; do
    ((SECONDS < deadline)) || { cat "$ES"/daemon.log >&2; fail "step $1 was not picked up within 120 s"; }
    sleep 0.3
  done
}
# Until the follow has taken a scan that began after now: a scan's scanned_at is its start,
# stored after its decisions, so whatever the directory held now has been decided on (or
# rightly not) by then. What "nothing decided" asserts after it is then a look, not a hope that
# a loaded daemon scanned within a fixed sleep.
wait_next_scan() {
  local since deadline=$((SECONDS + 120))
  since=$(date +%s.%N)
  until [ "$(es_sql "SELECT scanned_at > $since FROM follows WHERE id = $fid")" = 1 ]; do
    ((SECONDS < deadline)) || { cat "$ES"/daemon.log >&2; fail "follow $fid took no scan within 120 s"; }
    sleep 0.3
  done
}

out=$(as_user "$ACME_BUILD_DIR"/evalsched/cli/evalsched follow "$run" --suite "$ES"/two.toml 2>&1) || fail "evalsched follow refused: $out"
assert_contains "$out" "each complete checkpoint evaluated" "what follow prints"
fid=$(echo "$out" | sed -n 's/^follow \([0-9]*\) started.*/\1/p')
[ -n "$fid" ] || fail "no follow id in: $out"

save 100 complete
wait_decided 100
# Half-written: the weights are there, the marker is not.
save 200
# Complete, but root's and unreadable to the user: the daemon must not see it with root's eyes.
# Made 700 from the start: a directory made 755 and chmod'ed after its marker was readable to
# the user for a moment, and a scan that came then rightly saw it complete (a loaded run did).
(umask 077 && mkdir "$run/step-250") && touch "$run/step-250/.complete"
[ "$(stat -c %a "$run/step-250")" = 700 ] || fail "step-250 was not made 700"
wait_next_scan
kill -9 "$ES_PID"
wait "$ES_PID" 2>/dev/null
save 300 complete
es_start
wait_decided 300
wait_next_scan  # a round after step-300's: nothing more may come of it

evals=$(es_sql "SELECT checkpoint FROM evaluations WHERE name = 'run9' ORDER BY id" | xargs)
assert_eq "step-100 step-300" "$evals" "the checkpoints evaluated, in order"
assert_eq 0 "$(decided 200)" "the half-written step-200 decided on"
assert_eq 0 "$(decided 250)" "step-250, unreadable to the user, decided on"
assert_eq "$user" "$(es_sql "SELECT DISTINCT user FROM evaluations WHERE name = 'run9'")" "the evaluations' user"
# The model's size from the weights, not the optimizer state beside them.
assert_eq 100000 "$(es_sql "SELECT CAST(checkpoint_bytes AS INTEGER) FROM evaluations WHERE name = 'run9' AND checkpoint = 'step-300'")" \
  "step-300's size (model.bin only)"
list=$(as_user "$ACME_BUILD_DIR"/evalsched/cli/evalsched follows)
assert_contains "$list" "f$fid active $run run run9 2 evaluated, 0 skipped" "evalsched follows"

for id in $(es_sql "SELECT id FROM evaluations WHERE name = 'run9'"); do
  assert_eq done "$(es_wait "$id" 120)" "evaluation $id"
done
# Staging copied the weights and config, never the optimizer state or global_step*/ (the
# suite sets no stage = [...]: the default).
staged=$(cd "$ES"/stage/evalsched-"$user" && find . -type f ! -name .evalsched-complete ! -name '*.lock' -printf '%f\n' | sort -u | xargs)
assert_eq "config.json model.bin" "$staged" "the files staged on the nodes"
copied=$(find "$ES"/results -name stage.json -exec grep -h '"copied": 1' {} + | sed 's/.*"bytes": \([0-9]*\).*/\1/' | sort -u | xargs)
assert_eq 100003 "$copied" "bytes each copy read from shared storage (model.bin and config.json)"
report=$(evalsched report run9 --format json)
python3 - "$report" <<'PY' || fail "the report lacks a step: $report"
import json, sys
r = json.loads(sys.argv[1])
assert [c["checkpoint"] for c in r["checkpoints"]] == ["step-100", "step-300"], r["checkpoints"]
ids = {str(c["id"]) for c in r["checkpoints"]}
for row in r["rows"]:
    assert set(row["values"]) == ids and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in row["values"].values()), row
assert {row["dataset"] for row in r["rows"]} == {"mmlu", "gsm8k"}
PY

# The HTML report: one chart per dataset and metric, its points the report's scores.
chrome=$(command -v chromium || command -v chromium-browser || true)
evalsched report run9 --format html >"$ACME_TEST_TMP"/report.html || fail "report --format html failed"
if [ -n "$chrome" ]; then
  timeout 90 "$chrome" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
    --disable-sync --no-first-run --user-data-dir="$ACME_TEST_TMP/profile" --enable-logging=stderr --v=0 \
    --dump-dom "file://$ACME_TEST_TMP/report.html" >"$ACME_TEST_TMP/dom.html" 2>"$ACME_TEST_TMP/chrome.err" ||
    fail "chromium did not render the report: $(tail -n 3 "$ACME_TEST_TMP/chrome.err")"
  grep -E "CONSOLE|Uncaught" "$ACME_TEST_TMP/chrome.err" && fail "console messages while rendering the report"
  timeout 90 "$chrome" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$ACME_TEST_TMP/profile" \
    --window-size=900,700 --screenshot="$ACME_TEST_TMP/report.png" "file://$ACME_TEST_TMP/report.html" 2>/dev/null
  [ -n "${ACME_KEEP_SCREENSHOT:-}" ] && cp "$ACME_TEST_TMP/report.png" "$ACME_KEEP_SCREENSHOT"
  python3 - "$ACME_TEST_TMP/dom.html" "$report" <<'PY' || fail "the HTML report's charts do not match the report"
import json, sys
from html.parser import HTMLParser
points, charts = [], []
class P(HTMLParser):
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("class") == "point": points.append(a)
        if a.get("class") == "chart": charts.append(a)
P().feed(open(sys.argv[1]).read())
r = json.loads(sys.argv[2])
step = {str(c["id"]): int(c["checkpoint"].split("-")[1]) for c in r["checkpoints"]}
want = sorted((row["dataset"], row["metric"], step[i], round(v, 6)) for row in r["rows"] for i, v in row["values"].items())
got = sorted((p["data-dataset"], p["data-metric"], int(p["data-step"]), round(float(p["data-score"]), 6)) for p in points)
assert got == want, (got, want)
assert len(charts) == len(r["rows"]) and all(c["data-points"] == "2" for c in charts), charts
PY
else
  echo "chromium missing: the HTML report was not rendered (scripts/install-deps installs it)"
fi

# Stopped: a checkpoint saved afterwards is not evaluated.
out=$(as_user "$ACME_BUILD_DIR"/evalsched/cli/evalsched cancel "f$fid" 2>&1) || fail "evalsched cancel f$fid: $out"
assert_contains "$out" "follow $fid stopped" "cancel's answer"
save 400 complete
sleep 3
assert_eq 0 "$(decided 400)" "step-400, saved after the follow stopped, decided on"
assert_eq 2 "$(es_sql "SELECT COUNT(*) FROM evaluations WHERE name = 'run9'")" "evaluations of run9"
