#!/usr/bin/env bash
# Datasets scored by CPU metric jobs after sharding and bundling: longqa runs as shards (as many
# as the daemon sizes to the cluster's GPUs) and its one metric job scores all their predictions
# together (the fake scorer refuses partial coverage); humaneval rides in a bundle with two
# datasets scored in-trial, and its metric job follows that bundle. Shard 1 of longqa first hits
# an uncorrectable ECC error: the metric job must wait for the retry instead of scoring part of
# the dataset (or failing). Metric jobs ask for no GPU.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/evalsched-lib.sh"
es_setup
sed -e "s|@FAKE_EVAL@|$ACME_SRC_DIR/scripts/fake-eval|" -e "s|@FAIL_DIR@|$ES/fail|" \
  "$ACME_SRC_DIR"/tests/data/suites/fake-metrics.toml >"$ES"/metrics.toml
chmod 644 "$ES"/metrics.toml
: >"$ES"/fail/longqa-1.infra
chmod 666 "$ES"/fail/longqa-1.infra
es_start
id=$(es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/metrics.toml --params-b 7)
assert_eq done "$(es_wait "$id" 150)" "evaluation state"

# The plan: shards of longqa and one bundle of the three short datasets.
shards=$(es_sql "SELECT COUNT(*) FROM trials WHERE datasets = 'longqa'")
[ "$shards" -ge 2 ] || fail "longqa was not sharded ($shards trials)"
assert_eq "arc_e,humaneval,piqa" "$(es_sql "SELECT group_concat(datasets, ' ') FROM trials WHERE datasets != 'longqa'")" "the bundle"
assert_eq 2 "$(es_sql "SELECT attempts FROM trials WHERE trial_key LIKE '%longqa#1of%'")" "attempts of the shard that hit the ECC error"
assert_eq "humaneval done|longqa done" "$(es_sql "SELECT group_concat(dataset || ' ' || state, '|') FROM (SELECT * FROM metric_jobs ORDER BY dataset)")" "metric jobs"
# longqa's metric job was chained to both shards' jobs (afterany), and scored both shards at once.
after=$(es_sql "SELECT after_jobs FROM metric_jobs WHERE dataset = 'longqa'")
[ -z "$after" ] || [[ "$after" =~ ^[0-9]+(:[0-9]+)*$ ]] || fail "longqa's metric job was chained to '$after'"
# Chained to the shards' jobs, it either ran after the failed attempt, refused to score part of
# the dataset and was chained again to the retry, or was chained after the retry was queued:
# never a failure, and it read every shard.
assert_eq 0 "$(es_sql "SELECT failures FROM metric_jobs WHERE dataset = 'longqa'")" "failures of longqa's metric job"
result=$(cat "$ES"/results/"$id"/longqa/result.json)
assert_contains "$result" "\"prediction_files\": $shards" "longqa's metric job read every shard"

# The report: the metric jobs' scores for longqa and humaneval, the bundle's own for the others.
expected() { awk -v s="$(printf '%s' "$1" | cksum | cut -d' ' -f1)" 'BEGIN { printf "%.4f", (s % 1000) / 1000 }'; }
report=$(evalsched report "$id" --format csv)
assert_contains "$report" "longqa,exact_match,$(expected longqa | sed 's/0*$//')" "longqa's whole-dataset score"
assert_contains "$report" "humaneval,exact_match,$(expected humaneval | sed 's/0*$//')" "humaneval's score from its metric job"
grep -q "^piqa,accuracy," <<<"$report" || fail "piqa has no in-trial score: $report"
grep -q "^arc_e,accuracy," <<<"$report" || fail "arc_e has no in-trial score: $report"
assert_eq 0 "$(grep -c ',-$' <<<"$report")" "datasets without a score"

# No GPU for the metric jobs: their GPUs went back when inference ended.
for job in $(es_sql "SELECT job_id FROM metric_jobs"); do
  info=$(scontrol -o show job "$job" 2>/dev/null) || continue  # purged after MinJobAge
  case $info in *gres/gpu*|*TresPerNode=gpu*|*TresPerJob=gpu*) fail "metric job $job asked for a GPU: $info" ;; esac
done
status=$(evalsched status "$id")
assert_contains "$status" "METRIC JOB" "status lists the metric jobs"
