#!/usr/bin/env bash
# Without a GPU gpucheck says so and exits 2 (nothing checked); a bad config or --gpus value is
# a one-line error, also 2.
. "$(dirname "$0")/lib.sh"

bin=$ACME_BUILD_DIR/gpucheck
[ -x "$bin" ] || skip "gpucheck not built (configure found no CUDA/NCCL)"
nvidia-smi -L >/dev/null 2>&1 && skip "this machine has a GPU; tests/gpu/run covers it"
out=$("$bin" -c "$ACME_SRC_DIR/etc/gpucheck.toml" 2>&1)
assert_eq 2 "$?" "exit status without a GPU"
assert_contains "$out" "nothing to check on this machine" "message without a GPU"
out=$("$bin" -c /nonexistent.toml 2>&1)
assert_eq 2 "$?" "exit status with a missing config"
assert_contains "$out" "cannot read /nonexistent.toml" "message for a missing config"
printf '[thresholds]\ngemm = 1\n' >"$ACME_TEST_TMP/bad.toml"
out=$("$bin" -c "$ACME_TEST_TMP/bad.toml" 2>&1)
assert_eq 2 "$?" "exit status with a bad config"
assert_contains "$out" "bad.toml:2" "message for a bad config"
