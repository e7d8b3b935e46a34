#!/usr/bin/env bash
# A 20-dataset suite on 3 nodes x 4 GPUs: every dataset gets its score, each node copies the
# checkpoint once (the other trials there reuse the copy), and the report lists them all.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/evalsched-lib.sh"
es_setup
es_start
id=$(es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/suite.toml)
assert_eq done "$(es_wait "$id" 150)" "evaluation state"
report=$(evalsched report run7 --format csv)
assert_eq 21 "$(echo "$report" | wc -l)" "report lines (header + 20 datasets)"
assert_eq 0 "$(grep -c ',-$' <<<"$report")" "datasets without a score"
copies=$(es_sql "SELECT COUNT(*) FROM stagings WHERE copied = 1")
nodes=$(es_sql "SELECT COUNT(DISTINCT node) FROM stagings")
assert_eq "$nodes" "$copies" "checkpoint copies (one per node used)"
assert_eq "$((nodes * 200000))" "$(es_sql "SELECT CAST(SUM(bytes) AS INTEGER) FROM stagings")" "bytes read from shared storage"
# Every job carried its trial's tag, and ran once.
assert_eq 20 "$(es_sql "SELECT COUNT(DISTINCT tag) FROM attempts WHERE state = 'done'")" "trials done once"
grep -q "shared storage read: $((nodes * 200000)) bytes in $nodes copies" <<<"$(evalsched status "$id")" || fail "status does not show the copies"
