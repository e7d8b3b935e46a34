#!/usr/bin/env bash
# timeout: 900
# The whole shipped suites/core.toml (its [suite] commands, every dataset, group and leaf, shard
# flags and priors as shipped) scored end to end through acme-eval-lmeval and the lm_eval
# stand-in (a test double of lm-evaluation-harness, tests/fakes/harness, installed as pip
# installs lm-eval 0.4.13.dev0). Only the sample counts are lowered, to the stand-in's dataset
# sizes, and the prior of an unsharded dataset is capped at 30m: the minicluster's bf_window is
# 1h, and squadv2's 40m would need a 1h14m window (Slurm's default bf_window is a day). Every dataset, leaf and group gets a score in the report; squadv2 (metrics over the
# whole set) and gsm8k (random few-shot exemplars) run unsharded; a dataset that was sharded
# recombines to exactly the score of one unsharded run; nothing is reported as approximate.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/evalsched-lib.sh"
es_setup
es_lmeval_setup
adapters=$ACME_BUILD_DIR/evalsched/adapters

# core.toml with each dataset's and leaf's samples set to the stand-in's size of it (a group's
# leaves listed by name get a table of counts); everything else is written back as shipped.
"$ES"/lm/bin/python3 - "$ACME_SRC_DIR"/suites/core.toml "$ES"/lm/bin/lm_eval >"$ES"/core.toml <<'PY' || fail "cannot rewrite core.toml"
import importlib.machinery, json, re, sys, tomllib
suite = tomllib.load(open(sys.argv[1], "rb"))
size = importlib.machinery.SourceFileLoader("fake", sys.argv[2]).load_module().size_of
val = lambda v: json.dumps(v) if not isinstance(v, bool) else str(v).lower()
print("[suite]")
for k, v in suite["suite"].items():
    print(f"{k} = {val(v)}")
for d in suite["dataset"]:
    print("\n[[dataset]]")
    leaves = d.pop("leaves", None)
    if leaves is not None:
        d["samples"] = sum(size(l) for l in leaves)
    else:
        d["samples"] = size(d["name"])
    m = re.fullmatch(r"(\d+)m", d.get("prior", ""))
    if d.get("shard") is False and m and int(m.group(1)) > 30:
        d["prior"] = "30m"
    for k, v in d.items():
        print(f"{k} = {val(v)}")
    if leaves is not None:
        print("[dataset.leaves]")
        for l in leaves:
            print(f"{json.dumps(l)} = {size(l)}")
PY
chmod 644 "$ES"/core.toml
datasets=$(python3 -c 'import sys, tomllib
s = tomllib.load(open(sys.argv[1], "rb"))
names = [d["name"] for d in s["dataset"]] + [l for d in s["dataset"] for l in d.get("leaves", {})]
print(len(names))' "$ES"/core.toml)
[ "$datasets" -gt 250 ] || fail "core.toml names only $datasets datasets, groups and leaves"
es_start

id=$(PATH=$adapters:$ES/lm/bin:$PATH es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/core.toml --params-b 7)
[ -n "$id" ] || fail "evalsched submit refused core.toml"
state=$(es_wait "$id" 800)
[ "$state" = done ] || {
  evalsched status "$id" >&2
  grep -l 'Error\|acme-eval-lmeval: ' "$ES"/results/"$id"/logs/*.out 2>/dev/null | head -n 3 | xargs -r tail -n 5 >&2
  fail "evaluation $id of core.toml ended $state"
}
report=$(evalsched report "$id" --format json)
scored=$(echo "$report" | python3 -c 'import json, sys; print(len({r["dataset"] for r in json.load(sys.stdin)["rows"]}))')
assert_eq "$datasets" "$scored" "datasets, groups and leaves with a score in the report"
for d in squadv2 gsm8k; do
  assert_eq 1 "$(es_sql "SELECT COUNT(*) FROM trials WHERE evaluation = $id AND (datasets = '$d' OR datasets LIKE '$d,%' OR datasets LIKE '%,$d' OR datasets LIKE '%,$d,%')")" "trials of $d"
done
assert_contains "$(cat "$ES"/results/"$id"/squadv2/result.json)" '"best_f1"' "squadv2's scores"
grep -l '"approximate"' "$ES"/results/"$id"/*/result.json && fail "a dataset of core.toml was scored approximately"

# A sharded dataset against one unsharded run of the same stand-in and adapter.
sharded=$(es_sql "SELECT datasets FROM trials WHERE evaluation = $id AND num_shards > 1 ORDER BY datasets LIMIT 1")
[ -n "$sharded" ] || fail "no dataset of core.toml was sharded"
PATH=$adapters:$ES/lm/bin:$PATH acme-eval-lmeval run --checkpoint "$ES"/ckpt/run7/step-100 --task "$sharded" --out "$ACME_TEST_TMP"/ref \
  -- --confirm_run_unsafe_code >/dev/null 2>&1 || fail "the reference run of $sharded failed"
python3 - "$ACME_TEST_TMP"/ref/result.json "$ES"/results/"$id"/"$sharded"/result.json <<'PY' || fail "$sharded recombined from its shards differs from one run"
import json, sys
ref, got = (json.load(open(p))["scores"] for p in sys.argv[1:])
common = [m for m in ref if m in got]
assert common and all(abs(ref[m] - got[m]) < 1e-9 for m in common), (ref, got)
PY
