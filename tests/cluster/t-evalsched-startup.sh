#!/usr/bin/env bash
# Learned startup (issue 18): the first evaluation, planned with the cost model's 25 s guess of
# a trial's startup, bundles 24 short datasets; its trials measure the real startup (fake-eval
# loads the 200 kB checkpoint at 100 kB/s: 2 s, plus its own start), `evalsched priors` shows
# it, and the second evaluation, planned with it, runs every dataset in a trial of its own.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/evalsched-lib.sh"
es_setup
fake=$ACME_SRC_DIR/scripts/fake-eval
{
  printf '[suite]\nname = "short24"\n'
  printf 'command = "%s --checkpoint {checkpoint} --task {dataset} --out {output} --durations %s --load-bandwidth 100000"\n' "$fake" "$ES/short24.durations"
  printf 'bundle_command = "%s --checkpoint {checkpoint} --tasks {datasets} --out {output} --durations %s --load-bandwidth 100000"\n' "$fake" "$ES/short24.durations"
  for i in $(seq -w 1 24); do printf '\n[[dataset]]\nname = "d%s"\nkind = "multiple_choice"\nprior = "3s"\n' "$i"; done
} >"$ES"/short24.toml
for i in $(seq -w 1 24); do printf 'd%s\t3\n' "$i"; done >"$ES"/short24.durations
chmod 644 "$ES"/short24.toml "$ES"/short24.durations
mkdir -p "$ES"/ckpt/run7/step-200
chmod 755 "$ES"/ckpt/run7/step-200
cp -p "$ES"/ckpt/run7/step-100/model.bin "$ES"/ckpt/run7/step-200/
es_start

grep -q "no measured runs yet" <<<"$(evalsched priors)" || fail "a new daemon shows learned priors: $(evalsched priors)"
first=$(es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/short24.toml)
bundles=$(es_sql "SELECT COUNT(*) FROM trials WHERE evaluation = $first AND datasets LIKE '%,%'")
[ "$bundles" -gt 0 ] || fail "the first evaluation, planned with the 25 s guess, bundled nothing: $(es_sql "SELECT trial_key, startup_s FROM trials")"
assert_eq done "$(es_wait "$first" 150)" "the first evaluation's state"
trials=$(es_sql "SELECT COUNT(*) FROM trials WHERE evaluation = $first")
assert_eq "$trials" "$(es_sql "SELECT COUNT(*) FROM prior_startups")" "startups learned (one per trial)"
# A bundle reports each dataset's own inference, so its startup is one load, as a lone trial's.
assert_eq 0 "$(es_sql "SELECT COUNT(*) FROM prior_startups WHERE seconds < 1.5 OR seconds > 10")" \
  "startups outside 1.5-10 s (a 2 s load): $(es_sql "SELECT group_concat(round(seconds, 2), ' ') FROM prior_startups")"
shown=$(evalsched priors -P)
grep -q '^(startup)|' <<<"$shown" || fail "evalsched priors does not list the learned startup: $shown"

second=$(es_submit "$ES"/ckpt/run7/step-200 --suite "$ES"/short24.toml)
assert_eq 0 "$(es_sql "SELECT COUNT(*) FROM trials WHERE evaluation = $second AND datasets LIKE '%,%'")" "bundles in the second evaluation"
assert_eq 24 "$(es_sql "SELECT COUNT(*) FROM trials WHERE evaluation = $second")" "trials of the second evaluation"
assert_eq 0 "$(es_sql "SELECT COUNT(*) FROM trials WHERE evaluation = $second AND startup_s > 10")" "trials planned with more than 10 s of startup"
assert_eq done "$(es_wait "$second" 150)" "the second evaluation's state"
assert_eq 0 "$(evalsched report run7 --format csv | grep -cE ',-(,|$)')" "datasets without a score"
exit 0
