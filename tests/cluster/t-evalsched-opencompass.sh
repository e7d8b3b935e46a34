#!/usr/bin/env bash
# timeout: 900
# The whole shipped suites/opencompass.toml (its commands and datasets, each dataset's samples
# lowered to the opencompass stand-in's sizes: a test double of OpenCompass, tests/fakes/harness)
# scores every dataset through acme-eval-opencompass: the lists named FAMILY.CONFIG.VAR (C3,
# CMRC, DRCD, SVAMP) import, bbh's 27 subsets and the `score`-only evaluators combine, mbpp's
# counts add up over its shards, Xsum's rouge is reported whole, and every score equals one
# unsharded run of the same adapter. OpenCompass ran in each trial's own directory, never in the
# evaluation's (where concurrent trials would race on .cache/dataset_size.json). Then an OOM
# in one of race's two subsets, which OpenCompass itself exits 0 on, fails the dataset with a
# line naming the subset, instead of a score over the other one.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/evalsched-lib.sh"
es_setup
adapters=$ACME_BUILD_DIR/evalsched/adapters
harness=$ACME_SRC_DIR/tests/fakes/harness
export PATH=$adapters:$harness:$PATH

# The reference: each dataset run whole, once, by the adapter and the stand-in; its sample count
# becomes the suite's.
ref=$ACME_TEST_TMP/ref
datasets=$(sed -n 's/^name = "\(.*\)"$/\1/p' "$ACME_SRC_DIR"/suites/opencompass.toml | grep -v '^opencompass$')
assert_eq 19 "$(echo "$datasets" | wc -l)" "datasets of suites/opencompass.toml"
cp "$ACME_SRC_DIR"/suites/opencompass.toml "$ES"/oc.toml
for d in $datasets; do
  acme-eval-opencompass run --checkpoint "$ES"/ckpt/run7/step-100 --dataset "$d" --out "$ref/$d" >"$ref.$d.log" 2>&1 ||
    { cat "$ref.$d.log" >&2; fail "the reference run of $d failed"; }
  n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples"])' "$ref/$d/result.json")
  # This dataset's samples = N line (the first after its name).
  sed -i "/^name = \"$d\"\$/,/^samples = / s/^samples = .*/samples = $n/" "$ES"/oc.toml
done
# No dataset waits on an unknown prior; four long ones of each kind of shardable metric
# (accuracy, score, MBPP's score and counts) are sharded.
sed -i '/^prior = /d' "$ES"/oc.toml
for d in gsm8k.gsm8k_gen triviaqa.triviaqa_gen CLUE_CMRC.CLUE_CMRC_gen.CMRC_datasets mbpp.mbpp_gen; do
  sed -i "/^name = \"$d\"\$/,/^samples = / s/^samples = .*/&\nprior = \"50m\"/" "$ES"/oc.toml
done
chmod 644 "$ES"/oc.toml
es_start

id=$(es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/oc.toml --params-b 7)
state=$(es_wait "$id" 400)
[ "$state" = done ] || { evalsched status "$id" >&2; tail -n 5 "$ES"/results/"$id"/logs/*.out >&2; fail "evaluation $id ended $state"; }
report=$(evalsched report "$id" --format json)
for d in $datasets; do
  python3 - "$ref/$d/result.json" "$d" "$report" <<'PY' || fail "the scores of $d"
import json, sys
want = json.load(open(sys.argv[1]))["scores"]
got = {r["metric"]: list(r["values"].values())[0] for r in json.loads(sys.argv[3])["rows"] if r["dataset"] == sys.argv[2]}
for metric, value in want.items():
    if metric not in got or round(got[metric], 6) != round(value, 6):
        sys.exit(f"{sys.argv[2]} {metric}: report {got.get(metric)}, whole run {value}")
PY
done
for d in gsm8k.gsm8k_gen mbpp.mbpp_gen; do
  [ "$(es_sql "SELECT COUNT(*) FROM trials WHERE evaluation = $id AND datasets = '$d' AND num_shards > 1")" -ge 2 ] ||
    fail "$d was not sharded: its recombination went untested"
done
assert_contains "$(evalsched report "$id" --format json)" '"bbh.bbh_gen"' "bbh in the report"
# OpenCompass's summary columns beside the scores: the prompt hash (the same in every shard of
# sharded gsm8k) and the mode.
python3 - "$report" <<'PY' || fail "OpenCompass's version and mode in evalsched report: $(evalsched report "$id" | head -n 5)"
import json, re, sys
rows = [r for r in json.loads(sys.argv[1])["rows"] if r["dataset"] == "gsm8k.gsm8k_gen" and r["metric"] == "accuracy"]
assert rows and re.fullmatch(r"[0-9a-f]{6}", str(rows[0].get("version"))) and rows[0].get("mode") == "gen", rows
PY
[ -e "$ES"/results/"$id"/.cache ] && fail "OpenCompass wrote .cache in the evaluation's directory, shared by every trial"
trials=0
for c in $(find "$ES"/results/"$id" -name evalsched_opencompass.py); do
  trials=$((trials + 1))
  [ -s "$(dirname "$c")"/.cache/dataset_size.json ] || fail "OpenCompass did not run in the trial's own directory $(dirname "$c")"
done
[ "$trials" -ge 19 ] || fail "only $trials trial directories"

# One subset of race dies of an OOM; opencompass exits 0.
python3 - "$ES"/oc.toml "$ES"/race.toml <<'PY'
import re, sys
text = open(sys.argv[1]).read()
head, *blocks = text.split("[[dataset]]")
race = [b for b in blocks if 'name = "race.race_gen"' in b]
open(sys.argv[2], "w").write(head.replace('name = "opencompass"', 'name = "ocrace"') + "[[dataset]]" + race[0])
PY
chmod 644 "$ES"/race.toml
id2=$(OPENCOMPASS_FAKE_OOM=race-high es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/race.toml --params-b 7 --label step-100-oom)
assert_eq failed "$(es_wait "$id2" 400)" "evaluation with an OOM in race-high"
assert_contains "$(cat "$ES"/results/"$id2"/logs/*.out)" "race.race_gen: OpenCompass finished 1 of 2 subsets" "the trial's refusal"
assert_contains "$(cat "$ES"/results/"$id2"/logs/*.out)" "missing race-high (no predictions" "the subset named"
assert_contains "$(evalsched status "$id2")" "race-high" "status names the missing subset"
[ -e "$ES"/results/"$id2"/race.race_gen/result.json ] && fail "a partial race score was written"
grep -q '"accuracy"' <<<"$(evalsched report "$id2" --format json)" && fail "the report shows a score over race-middle alone"
exit 0
