#!/usr/bin/env bash
# acme-eval-lmeval run by hand against the lm_eval stand-in (a test double of
# lm-evaluation-harness, tests/fakes/harness, installed as pip installs a given version), as a
# trial's command runs it: an lm-eval older than 0.4.9 is refused with one line before it runs;
# local-completions given the server root ({base_url}) reaches the completions endpoint; a task
# lm-eval does not know fails with lm-eval's own words; gsm8k (5-shot, random exemplars) cut into
# shards is marked approximate and does differ from the whole run, gsm8k_cot (first_n exemplars)
# recombines to exactly the whole run's score; squadv2 cut into shards is refused with one line
# (its metrics are not means); a shard record missing a member is refused with one line.
. "$(dirname "$0")/lib.sh"
T=$ACME_TEST_TMP
harness=$ACME_SRC_DIR/tests/fakes/harness
export PATH=$ACME_BUILD_DIR/evalsched/adapters:$PATH
mkdir -p "$T"/ckpt
head -c 1000 /dev/urandom >"$T"/ckpt/model.bin
"$harness"/install-lm_eval "$T"/new || fail "install-lm_eval failed"
"$harness"/install-lm_eval "$T"/old 0.4.8 || fail "install-lm_eval 0.4.8 failed"
new=$T/new/bin/lm_eval

# Runs the adapter; its stderr in $T/err, its exit status in $rc.
adapter() {
  acme-eval-lmeval "$@" >"$T"/out 2>"$T"/err
  rc=$?
}
# The adapter's own lines on stderr (the harness's output passes through too).
own_lines() { grep '^acme-eval-lmeval: ' "$T"/err | grep -v '^acme-eval-lmeval: running '; }

# 1. lm-eval 0.4.8 has no --samples: refused before it runs, sharded or not, named on PATH or by path.
"$T"/old/bin/lm_eval --version >/dev/null 2>&1 && fail "the stand-in answers --version, which no lm-eval does"
adapter run --checkpoint "$T"/ckpt --task arc_easy --out "$T"/old-whole --lm-eval "$T"/old/bin/lm_eval
assert_eq 1 "$rc" "exit status for lm-eval 0.4.8"
assert_eq "acme-eval-lmeval: lm-evaluation-harness 0.4.8 ($T/old/bin/lm_eval) is too old: acme-eval-lmeval needs 0.4.9 or later, whose --samples selects a shard's documents; upgrade it (pip install -U 'lm_eval>=0.4.9')" \
  "$(cat "$T"/err)" "the refusal of lm-eval 0.4.8"
PATH=$T/old/bin:$PATH adapter run --checkpoint "$T"/ckpt --task arc_easy --shard 1 --num-shards 2 --samples 40 --out "$T"/old-shard
assert_eq 1 "$rc" "exit status for lm-eval 0.4.8 on PATH, sharded"
assert_eq 1 "$(wc -l <"$T"/err)" "lines on stderr"
assert_contains "$(cat "$T"/err)" "is too old" "the refusal"
[ -e "$T"/old-shard/evalsched-samples.json ] || [ -e "$T"/old-shard/evalsched-shard.json ] && fail "a refused run left files behind"
adapter run --checkpoint "$T"/ckpt --task arc_easy --shard 1 --num-shards 2 --samples 40 --out "$T"/new-shard --lm-eval "$new"
assert_eq 0 "$rc" "lm-eval 0.4.13.dev0, sharded: $(tail -n 3 "$T"/err)"

# 2. local-completions with the server root, as evalsched's {base_url} gives it.
adapter run --model local-completions --base-url http://127.0.0.1:8000 --checkpoint "$T"/ckpt --task arc_easy --out "$T"/served --lm-eval "$new"
assert_eq 0 "$rc" "local-completions with --base-url http://127.0.0.1:8000: $(tail -n 3 "$T"/err)"
assert_contains "$(cat "$T"/err)" "base_url=http://127.0.0.1:8000/v1/completions," "the URL lm_eval was given"

# 3. A task lm-eval does not know: lm-eval's ValueError, its exit status.
adapter run --checkpoint "$T"/ckpt --task gsm8kk --out "$T"/typo --lm-eval "$new"
assert_eq 1 "$rc" "exit status for an unknown task"
assert_contains "$(cat "$T"/err)" "ValueError: Tasks not found: gsm8kk" "the harness's words"

# 4. Random few-shot exemplars: shards differ from the whole run and say so; first_n ones do not.
shards() { # task samples: two shards and the metric job under $T/$1, the whole run under $T/$1-whole
  local i
  for i in 0 1; do
    adapter run --checkpoint "$T"/ckpt --task "$1" --shard $i --num-shards 2 --samples "$2" --out "$T/$1/shard-$i-of-2" --lm-eval "$new"
    assert_eq 0 "$rc" "$1 shard $i: $(tail -n 3 "$T"/err)"
  done
  adapter run --checkpoint "$T"/ckpt --task "$1" --out "$T/$1-whole" --lm-eval "$new"
  assert_eq 0 "$rc" "$1 whole: $(tail -n 3 "$T"/err)"
  adapter score --task "$1" --out "$T/$1"
}
size() { "$T"/new/bin/python3 -c 'import importlib.machinery as m, sys; print(m.SourceFileLoader("f", sys.argv[1]).load_module().size_of(sys.argv[2]))' "$new" "$1"; }
value() { python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(round(r["scores"][sys.argv[2]], 6), len(r.get("approximate", [])))' "$@"; }
shards gsm8k "$(size gsm8k)"
assert_eq 0 "$rc" "gsm8k's metric job: $(cat "$T"/err)"
assert_eq "acme-eval-lmeval: gsm8k: 5-shot with the default sampler, a shard draws other exemplars than the whole run for every document after its start: the recombined scores are not the unsharded run's (set shard = false for them)" \
  "$(own_lines)" "what gsm8k's metric job says"
read -r sharded approx < <(value "$T"/gsm8k/result.json exact_match.strict-match)
read -r whole _ < <(value "$T"/gsm8k-whole/result.json exact_match.strict-match)
assert_eq 1 "$approx" "gsm8k's result.json lists why it is approximate"
[ "$sharded" != "$whole" ] || fail "gsm8k's shards scored $sharded, the whole run too: the stand-in's exemplars do not depend on the shard"
shards gsm8k_cot "$(size gsm8k_cot)"
assert_eq 0 "$rc" "gsm8k_cot's metric job: $(cat "$T"/err)"
assert_eq "$(value "$T"/gsm8k_cot-whole/result.json exact_match.strict-match)" "$(value "$T"/gsm8k_cot/result.json exact_match.strict-match)" \
  "gsm8k_cot (8-shot, first_n) recombined, and not called approximate"

# 5. squadv2's metrics are computed over all (prediction, reference) pairs: shards are refused.
shards squadv2 "$(size squadv2)"
assert_eq 1 "$rc" "exit status of squadv2's metric job"
assert_contains "$(own_lines | tail -n 1)" "no per-sample metric of squadv2 can be aggregated across shards: set shard = false for it" "squadv2's refusal"
assert_contains "$(cat "$T"/squadv2-whole/result.json)" '"best_f1"' "squadv2 unsharded"

# 6. A shard record without "end": one line, exit 1 (never a crash).
sed -i -E 's/"end": ?[0-9]+,//' "$T"/gsm8k_cot/shard-1-of-2/evalsched-shard.json
adapter score --task gsm8k_cot --out "$T"/gsm8k_cot
assert_eq 1 "$rc" "exit status for a shard record without end"
assert_eq "acme-eval-lmeval: $T/gsm8k_cot/shard-1-of-2/evalsched-shard.json is not the adapter's shard record (no integer \"end\"): rerun the trial" \
  "$(cat "$T"/err)" "the refusal of a broken shard record"
