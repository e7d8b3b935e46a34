#!/usr/bin/env bash
# A core.toml-shaped suite (tests/data/suites/lmeval-core.toml: core.toml's own [suite] commands)
# scores every dataset through acme-eval-lmeval and the lm_eval stand-in (a test double of
# lm-evaluation-harness, tests/fakes/harness): arc_easy as shards selected with lm_eval
# --samples, recombined by its metric job to exactly the score of one unsharded run; mmlu's three
# leaf tasks (a group written as its leaves), gsm8k (two filters) and humaneval (code) in one
# bundle, each scored by its metric job, and mmlu's group job combining its leaves to exactly the
# score lm_eval itself gives the group run whole.
# The stand-in is installed as pip installs lm-eval (tests/fakes/harness/install-lm_eval: a venv
# with its version's metadata). It is found through the environment submitted from (PATH), as
# sbatch --export=ALL would; then, submitted from a shell whose PATH lacks it, through the suite's
# setup = "source <venv>/bin/activate".
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/evalsched-lib.sh"
es_setup
es_lmeval_setup
adapters=$ACME_BUILD_DIR/evalsched/adapters
harness=$ACME_SRC_DIR/tests/fakes/harness
sed -e "s|@SETUP@||" "$ACME_SRC_DIR"/tests/data/suites/lmeval-core.toml >"$ES"/lmeval.toml
chmod 644 "$ES"/lmeval.toml
es_start

# 1. The harness on the submitter's PATH.
id=$(PATH=$adapters:$ES/lm/bin:$PATH es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/lmeval.toml --params-b 7)
state=$(es_wait "$id" 150)
[ "$state" = done ] || { evalsched status "$id" >&2; tail -n 20 "$ES"/results/"$id"/logs/*.out >&2; fail "evaluation $id ended $state"; }
shards=$(es_sql "SELECT COUNT(*) FROM trials WHERE evaluation = $id AND datasets = 'arc_easy'")
[ "$shards" -ge 2 ] || fail "arc_easy was not sharded ($shards trials)"
assert_eq "gsm8k humaneval mmlu_abstract_algebra mmlu_anatomy mmlu_astronomy" "$(es_sql "SELECT datasets FROM trials WHERE evaluation = $id AND datasets != 'arc_easy'" | tr , '\n' | sort | xargs)" "the bundle"
assert_eq 7 "$(es_sql "SELECT COUNT(*) FROM metric_jobs WHERE evaluation = $id AND state = 'done'")" "metric jobs done (3 datasets, mmlu's 3 leaves, its group job)"
ls "$ES"/results/"$id"/arc_easy/shard-0-of-"$shards"/*/results_*.json >/dev/null || fail "no lm_eval results_*.json in arc_easy's shard 0"
ls "$ES"/results/"$id"/arc_easy/shard-0-of-"$shards"/*/samples_arc_easy_*.jsonl >/dev/null || fail "no lm_eval samples file in arc_easy's shard 0"

# The expected scores: one unsharded run of the same stand-in and adapter on the same checkpoint.
ref=$ACME_TEST_TMP/ref
for t in arc_easy mmlu gsm8k humaneval; do
  PATH=$adapters:$ES/lm/bin:$PATH acme-eval-lmeval run --checkpoint "$ES"/ckpt/run7/step-100 --task "$t" --out "$ref/$t" >/dev/null 2>&1 ||
    fail "the reference run of $t failed"
done
score() { python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["scores"][sys.argv[2]], 6))' "$@"; }
report=$(evalsched report "$id" --format json)
got() { # dataset metric: the score the report shows for evaluation $eid
  echo "$report" | python3 -c 'import json, sys
for r in json.load(sys.stdin)["rows"]:
    if r["dataset"] == sys.argv[1] and r["metric"] == sys.argv[2]:
        print(round(list(r["values"].values())[0], 6))' "$1" "$2"
}
assert_eq "$(score "$ref"/arc_easy/result.json acc)" "$(got arc_easy acc)" "arc_easy recombined from $shards shards"
assert_eq "$(score "$ref"/mmlu/result.json acc)" "$(got mmlu acc)" "mmlu (a group, lm_eval's own score run whole) from its leaves in the bundle"
assert_contains "$(cat "$ES"/results/"$id"/mmlu/result.json)" '"samples": 44' "mmlu's group job weighted every leaf document"
assert_eq "$(score "$ref"/gsm8k/result.json exact_match.strict-match)" "$(got gsm8k exact_match.strict-match)" "gsm8k strict-match"
assert_eq "$(score "$ref"/gsm8k/result.json exact_match.flexible-extract)" "$(got gsm8k exact_match.flexible-extract)" "gsm8k flexible-extract"
assert_eq "$(score "$ref"/humaneval/result.json pass@1)" "$(got humaneval pass@1)" "humaneval pass@1"
assert_contains "$(cat "$ES"/results/"$id"/arc_easy/result.json)" '"samples": 40' "arc_easy's metric job read every document"

# 2. The harness only in a venv the suite's setup activates; the submitting shell has no lm_eval.
sed -e "s|@SETUP@|setup = \"source $ES/lm/bin/activate\"|" "$ACME_SRC_DIR"/tests/data/suites/lmeval-core.toml >"$ES"/venv.toml
chmod 644 "$ES"/venv.toml
PATH=$adapters:/usr/bin:/bin command -v lm_eval >/dev/null && fail "lm_eval is on the plain PATH: the venv case proves nothing"
id2=$(PATH=$adapters:/usr/local/bin:/usr/bin:/bin es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/venv.toml --params-b 7 --label step-100-venv)
state=$(es_wait "$id2" 150)
[ "$state" = done ] || { tail -n 20 "$ES"/results/"$id2"/logs/*.out >&2; fail "evaluation $id2 (harness in the setup's venv) ended $state"; }
report=$(evalsched report "$id2" --format json)
assert_eq "$(score "$ref"/arc_easy/result.json acc)" "$(got arc_easy acc)" "arc_easy through the venv's lm_eval"

# 3. The OpenCompass suite's commands (tests/data/suites/opencompass-small.toml) through
# acme-eval-opencompass and the opencompass stand-in: gsm8k sharded with test_range, mmlu's three
# subsets whole; each dataset's metric job runs -m eval in the trials' work dirs.
cp "$ACME_SRC_DIR"/tests/data/suites/opencompass-small.toml "$ES"/oc.toml
chmod 644 "$ES"/oc.toml
id3=$(PATH=$adapters:$harness:$PATH es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/oc.toml --params-b 7 --label step-100-oc)
state=$(es_wait "$id3" 150)
[ "$state" = done ] || { tail -n 20 "$ES"/results/"$id3"/logs/*.out >&2; fail "evaluation $id3 (OpenCompass) ended $state"; }
[ "$(es_sql "SELECT COUNT(*) FROM trials WHERE evaluation = $id3 AND datasets = 'gsm8k.gsm8k_gen'")" -ge 2 ] || fail "gsm8k was not sharded"
ls "$ES"/results/"$id3"/gsm8k.gsm8k_gen/shard-0-of-*/opencompass/*/predictions/evalsched/gsm8k_shard0of*.json >/dev/null ||
  fail "no OpenCompass predictions in gsm8k's shard 0"
for t in gsm8k.gsm8k_gen mmlu.mmlu_gen; do
  PATH=$adapters:$harness:$PATH acme-eval-opencompass run --checkpoint "$ES"/ckpt/run7/step-100 --dataset "$t" --out "$ref/$t" >/dev/null 2>&1 ||
    fail "the reference OpenCompass run of $t failed"
done
report=$(evalsched report "$id3" --format json)
assert_eq "$(score "$ref"/gsm8k.gsm8k_gen/result.json accuracy)" "$(got gsm8k.gsm8k_gen accuracy)" "gsm8k recombined from its shards"
assert_eq "$(score "$ref"/mmlu.mmlu_gen/result.json accuracy)" "$(got mmlu.mmlu_gen accuracy)" "mmlu over its three subsets"
assert_eq "$(score "$ref"/mmlu.mmlu_gen/result.json accuracy_naive_average)" "$(got mmlu.mmlu_gen accuracy_naive_average)" "mmlu's naive average"
