#!/usr/bin/env bash
# Another user made the victim's predictable staging directory (stage_dir/evalsched-<user>)
# first, open to all, to read or swap the checkpoint copies: the victim's trial copies nothing
# into it and fails with one line naming the squatter in its reason.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/evalsched-lib.sh"
victim=$(test_user)
es_setup
es_start
chmod 666 "$EVALSCHED_SOCKET"
cat >"$ES"/one.toml <<TOML
[suite]
name = "one"
command = "$ACME_SRC_DIR/scripts/fake-eval --checkpoint {checkpoint} --task {dataset} --out {output} --fail-dir $ES/fail"
gpus = 1
[[dataset]]
name = "mmlu"
kind = "multiple_choice"
prior = "5s"
TOML
chmod 644 "$ES"/one.toml
squat=$ES/stage/evalsched-$victim
runuser -u nobody -- mkdir -m 777 "$squat" || fail "nobody cannot make $squat"
out=$(runuser -u "$victim" -- env EVALSCHED_SOCKET="$EVALSCHED_SOCKET" "$ACME_BUILD_DIR"/evalsched/cli/evalsched submit \
  "$ES"/ckpt/run7/step-100 --suite "$ES"/one.toml 2>&1) || fail "the victim's submit refused: $out"
id=$(echo "$out" | sed -n 's/^evaluation \([0-9]*\) submitted.*/\1/p')
assert_eq failed "$(es_wait "$id" 120)" "the evaluation's state"
reason=$(es_sql "SELECT reason FROM trials WHERE evaluation = $id")
assert_contains "$reason" "staging_failed: staging directory $squat is owned by uid $(id -u nobody) with mode 777, not by you (uid $(id -u "$victim")) with mode 700: ask the node's admin to remove it" "the trial's reason"
assert_eq "" "$(ls -A "$squat")" "what the victim left in the squatted directory"
exit 0
