#!/usr/bin/env bash
# A trial that fails with an uncorrectable ECC error (infrastructure) is retried on another
# node and scores; one that raises ValueError (framework) fails once and is reported, not retried.
# Failures that repeat anywhere (issue 38) are not retried either: a task the harness does not
# know (exit 2, lm-eval's "Tasks not found"), and a harness missing from the job's PATH, whose
# dataset's metric job never runs. Every failed dataset says why in its log's words and where
# that log is, in status, watch, report and --json, whole at 80 columns.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/evalsched-lib.sh"
es_setup
# Three datasets are enough.
es_first_datasets 3 three
: >"$ES"/fail/mmlu.infra
: >"$ES"/fail/cmmlu.value
: >"$ES"/fail/ceval.unknown
chmod 666 "$ES"/fail/*
# The real adapter, with no harness where it looks: every dataset of this suite fails to start.
cat >"$ES"/harness.toml <<TOML
[suite]
name = "harness"
command = "$ACME_BUILD_DIR/evalsched/adapters/acme-eval-lmeval run --checkpoint {checkpoint} --task {dataset} --out {output} --lm-eval $ES/no-such-dir/lm_eval"
metric_command = "$ACME_BUILD_DIR/evalsched/adapters/acme-eval-lmeval score --task {dataset} --out {output}"
gpus = 1

[[dataset]]
name = "boolq"
kind = "multiple_choice"
prior = "5s"
TOML
chmod 644 "$ES"/harness.toml
es_start
id=$(es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/three.toml)
hid=$(es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/harness.toml --name harness)
assert_eq failed "$(es_wait "$id" 90)" "evaluation state (two datasets failed)"
assert_eq failed "$(es_wait "$hid" 90)" "evaluation state (no harness)"
nodes=$(es_sql "SELECT group_concat(a.node, ' ') FROM attempts a JOIN trials t ON t.id = a.trial WHERE t.datasets = 'mmlu' ORDER BY a.number")
set -- $nodes
assert_eq 2 "$#" "attempts of the ECC trial"
[ "$1" != "$2" ] || fail "the retry ran on the failing node $1 again"
assert_eq done "$(es_sql "SELECT state FROM trials WHERE datasets = 'mmlu'")" "ECC trial after its retry"
assert_eq 1 "$(es_sql "SELECT attempts FROM trials WHERE datasets = 'cmmlu'")" "attempts of the ValueError trial"
# Deterministic: diagnosed, and run once.
assert_eq "1|dataset_loading_error (framework)" "$(es_sql "SELECT attempts || '|' || reason FROM trials WHERE datasets = 'ceval'")" "the unknown task"
assert_eq "1|command_not_found (script)" "$(es_sql "SELECT attempts || '|' || reason FROM trials WHERE evaluation = $hid")" "the missing harness"
# Its metric job was chained to the trial at most once, and never ran: failed, saying why.
metric=$(es_sql "SELECT submissions || '|' || state || '|' || reason FROM metric_jobs WHERE evaluation = $hid")
case $metric in
  [01]"|failed|inference failed: "*) ;;
  *) fail "the metric job of a dataset whose inference failed: $metric" ;;
esac
# Chained with afterany, slurmctld may start it the moment the trial ends, before evalschedd
# stops it: then only its output check ran (no inference-done marker: exit 69), never the scorer.
mtag=$(es_sql "SELECT tag FROM metric_jobs WHERE evaluation = $hid")
mlog=$(ls "$ES"/results/*/logs/"$mtag".out 2>/dev/null | head -1)
[ -z "$mtag" ] || [ -z "$mlog" ] || ! grep -q "acme-eval-lmeval" "$mlog" || fail "the metric job's scorer ran: $(cat "$mlog")"
[ -z "$(ls "$ES"/results/*/boolq/result.json 2>/dev/null)" ] || fail "boolq has a result.json without inference"

# status at 80 columns (not a terminal): each failure, then its evidence and log on lines of
# their own, never cut; the log is the trial's and holds that line.
status=$(COLUMNS='' evalsched status "$id")
block=$(echo "$status" | grep -A2 "^cmmlu failed: value_error (framework)$") || fail "no whole failure line for cmmlu: $status"
assert_eq "    ValueError: invalid literal in cmmlu answer key" "$(echo "$block" | sed -n 2p)" "cmmlu's evidence line"
log=$(echo "$block" | sed -n 3p | sed -n 's/^    log: //p')
[ -n "$log" ] || fail "no log line under cmmlu's failure: $block"
case $log in "$ES"/results/*/logs/*.out) ;; *) fail "cmmlu's log is not the trial's log: $log" ;; esac
grep -q "ValueError: invalid literal in cmmlu answer key" "$log" || fail "$log does not hold the evidence line"
grep -q "^    fake-eval: Tasks not found: ceval (no such" <<<"$(grep -A1 "^ceval failed: dataset_loading_error (framework)$" <<<"$status")" ||
  fail "no evidence for the unknown task: $status"
# The failure blocks (a heading, its indented lines, up to the blank line): nothing cut.
blocks=$(echo "$status" | awk '/^[a-z0-9_]+ failed: / { on = 1 } /^$/ { on = 0 } on')
[ "$(grep -c "failed: " <<<"$blocks")" = 2 ] || fail "not one block per failed dataset: $status"
grep -q '+$' <<<"$blocks" && fail "a failure line was cut: $blocks"
hstatus=$(COLUMNS='' evalsched status "$hid")
grep -q "^    acme-eval-lmeval: cannot run" <<<"$(grep -A1 "^boolq failed: command_not_found (script)$" <<<"$hstatus")" ||
  fail "the missing harness's line is not shown: $hstatus"
# --json: the dataset carries them.
evalsched status "$id" --json | python3 -c '
import json, sys
d = {x["dataset"]: x for x in json.load(sys.stdin)["dataset_list"]}
c = d["cmmlu"]
assert c["evidence"] == "ValueError: invalid literal in cmmlu answer key", c
assert c["log"] == sys.argv[1], c
' "$log" || fail "status --json lacks cmmlu's evidence and log"

# watch of the finished evaluation (a pipe): the same block under the stamped line; exit 1.
rc=0
watch_out=$(evalsched watch "$id" --interval 0.3) || rc=$?
assert_eq 1 "$rc" "watch's exit code for a failed evaluation"
grep -q "^ *log: $log$" <<<"$(grep -A2 "cmmlu failed: value_error (framework)$" <<<"$watch_out")" || fail "watch does not name cmmlu's log: $watch_out"
grep -q "^ *ValueError: invalid literal in cmmlu answer key$" <<<"$watch_out" || fail "watch does not show cmmlu's evidence: $watch_out"

report=$(evalsched report run7)
assert_contains "$report" "(framework)" "the report says why cmmlu has no score"
grep -q "^mmlu .*accuracy" <<<"$report" || fail "mmlu has no score in the report: $report"
grep -q "^    log: $log$" <<<"$(grep -A2 "^cmmlu on step-100 (evaluation $id) failed: value_error (framework)$" <<<"$report")" ||
  fail "the report does not say why and where for cmmlu: $report"
evalsched report run7 --format json | python3 -c '
import json, sys
f = {x["dataset"]: x for x in json.load(sys.stdin)["failures"]}
assert f["cmmlu"]["log"] == sys.argv[1] and f["cmmlu"]["evidence"].startswith("ValueError"), f
assert f["ceval"]["reason"] == "dataset_loading_error (framework)", f
' "$log" || fail "report --format json lacks the failures"
