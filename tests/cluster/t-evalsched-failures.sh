#!/usr/bin/env bash
# A trial that fails with an uncorrectable ECC error (infrastructure) is retried on another
# node and scores; one that raises ValueError (framework) fails once and is reported, not retried.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/evalsched-lib.sh"
es_setup
# Two datasets are enough.
es_first_datasets 2 two
: >"$ES"/fail/mmlu.infra
: >"$ES"/fail/cmmlu.value
chmod 666 "$ES"/fail/*
es_start
id=$(es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/two.toml)
assert_eq failed "$(es_wait "$id" 90)" "evaluation state (one dataset failed)"
nodes=$(es_sql "SELECT group_concat(a.node, ' ') FROM attempts a JOIN trials t ON t.id = a.trial WHERE t.datasets = 'mmlu' ORDER BY a.number")
set -- $nodes
assert_eq 2 "$#" "attempts of the ECC trial"
[ "$1" != "$2" ] || fail "the retry ran on the failing node $1 again"
assert_eq done "$(es_sql "SELECT state FROM trials WHERE datasets = 'mmlu'")" "ECC trial after its retry"
assert_eq 1 "$(es_sql "SELECT attempts FROM trials WHERE datasets = 'cmmlu'")" "attempts of the ValueError trial"
report=$(evalsched report run7)
assert_contains "$report" "(framework)" "the report says why cmmlu has no score"
echo "$report" | grep -q "^mmlu .*accuracy" || fail "mmlu has no score in the report: $report"
