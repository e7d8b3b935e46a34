#!/usr/bin/env bash
# A suite group run as its leaf tasks (evalsched-suite(5) GROUPS, issue 18): grp's three leaves
# are scheduled like datasets (the long one sharded, the short ones bundled with a plain
# dataset by leaf name), each leaf is scored by its own CPU metric job, and one CPU job per
# group, after every leaf's trials, writes the group's score: the mean of the leaves' scores
# weighted by their sample counts, as lm-eval's weight_by_size does. Checked as the user sees
# it, in `evalsched report` (csv and table).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/evalsched-lib.sh"
es_setup
sed -e "s|@FAKE_EVAL@|$ACME_SRC_DIR/scripts/fake-eval|" -e "s|@FAIL_DIR@|$ES/fail|" \
  "$ACME_SRC_DIR"/tests/data/suites/fake-groups.toml >"$ES"/groups.toml
chmod 644 "$ES"/groups.toml
es_start
id=$(es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/groups.toml --params-b 7)
assert_eq done "$(es_wait "$id" 150)" "evaluation state"

# The plan: the group itself never runs; its long leaf is sharded, the short ones bundled.
assert_eq 0 "$(es_sql "SELECT COUNT(*) FROM trials WHERE ',' || datasets || ',' LIKE '%,grp,%'")" "trials running the group itself"
shards=$(es_sql "SELECT COUNT(*) FROM trials WHERE datasets = 'grp_long'")
[ "$shards" -ge 2 ] || fail "grp_long was not sharded ($shards trials)"
bundle=$(es_sql "SELECT datasets FROM trials WHERE datasets LIKE '%,%'")
for leaf in grp_b grp_c; do
  [[ ",$bundle," == *",$leaf,"* ]] || fail "$leaf is not in the bundle '$bundle'"
done
# One metric job per leaf and plainqa, one group job; the group's waits on every leaf trial.
assert_eq "grp done|grp_b done|grp_c done|grp_long done|plainqa done" \
  "$(es_sql "SELECT group_concat(dataset || ' ' || state, '|') FROM (SELECT * FROM metric_jobs ORDER BY dataset)")" "metric jobs"
assert_eq "$(es_sql "SELECT COUNT(*) FROM trials WHERE datasets LIKE '%grp_%'")" \
  "$(es_sql "SELECT COUNT(*) FROM metric_trials x JOIN metric_jobs m ON m.id = x.metric WHERE m.dataset = 'grp'")" "trials the group job waits for"

# What the user sees: each leaf's score, and the group's as their sample-weighted mean.
report=$(evalsched report "$id" --format csv)
score() { echo "$report" | awk -F, -v d="$1" '$1 == d && $2 == "exact_match" { print $3 }'; }
for leaf in grp_long grp_b grp_c; do
  [ -n "$(score $leaf)" ] || fail "no score for leaf $leaf: $report"
done
[ -n "$(score grp)" ] || fail "no score for the group: $report"
want=$(awk -v l="$(score grp_long)" -v b="$(score grp_b)" -v c="$(score grp_c)" 'BEGIN { printf "%.6f", (l * 9800 + b * 150 + c * 50) / 10000 }')
# The report prints four decimals: equal to within half of the last one.
awk -v got="$(score grp)" -v want="$want" 'BEGIN { d = got - want; exit !(d <= 5e-5 && d >= -5e-5) }' ||
  fail "group score $(score grp), expected the weighted mean of its leaves $want"
# A plain mean would differ: the test would not pass by accident.
plain=$(awk -v l="$(score grp_long)" -v b="$(score grp_b)" -v c="$(score grp_c)" 'BEGIN { printf "%.6f", (l + b + c) / 3 }')
awk -v p="$plain" -v w="$want" 'BEGIN { exit !(p - w > 1e-3 || w - p > 1e-3) }' ||
  fail "the leaves' scores ($plain plain, $want weighted) cannot tell a weighted from a plain mean"
table=$(evalsched report "$id")
grep -qw grp <<<"$table" || fail "evalsched report (table) does not list the group: $table"
echo "groups: grp = $(score grp) (weighted mean of $(score grp_long), $(score grp_b), $(score grp_c))"
