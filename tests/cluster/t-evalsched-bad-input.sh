#!/usr/bin/env bash
# Bad suites, a missing checkpoint, bad CLI arguments and a daemon that is not running: one
# clear line each, a non-zero exit, and no job submitted.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/evalsched-lib.sh"
es_setup
expect_error() { # what needle command...
  local what=$1 needle=$2 out
  shift 2
  out=$("$@" 2>&1) && fail "$what: accepted"
  status=$?
  assert_eq 1 "$status" "$what: exit status (evalsched(1): 0 or 1, never CLI11's own codes)"
  assert_contains "$out" "$needle" "$what"
  assert_eq 1 "$(echo "$out" | wc -l)" "$what: lines of output"
}
expect_error "daemon not running" "evalschedd is not running at $EVALSCHED_SOCKET" evalsched status
es_start
printf '[suite]\nname = "x"\ncommand = "run {ckpt}"\n[[dataset]]\nname = "a"\n' >"$ES"/bad-placeholder.toml
expect_error "unknown placeholder" "bad-placeholder.toml:3:" evalsched submit "$ES"/ckpt/run7/step-100 --suite "$ES"/bad-placeholder.toml
printf '[suite]\nname = "x"\ncommand = "run {checkpoint}"\n[[dataset]]\nname = "a"\n[[dataset]]\nname = "a"\n' >"$ES"/dup.toml
expect_error "duplicate dataset" "dup.toml:" evalsched submit "$ES"/ckpt/run7/step-100 --suite "$ES"/dup.toml
expect_error "missing suite" "suite $ES/nope.toml cannot be read" evalsched submit "$ES"/ckpt/run7/step-100 --suite "$ES"/nope.toml
expect_error "missing checkpoint" "checkpoint $ES/ckpt/run7/step-999 does not exist" evalsched submit "$ES"/ckpt/run7/step-999 --suite "$ES"/suite.toml
expect_error "bad priority" "priority" evalsched submit "$ES"/ckpt/run7/step-100 --suite "$ES"/suite.toml --priority 5000
expect_error "bad id" "evalsched: ID: 'abc' is not a number: see evalsched --help" evalsched status abc
expect_error "unknown command" "evalsched: unknown command 'frobnicate': see evalsched --help" evalsched frobnicate
expect_error "no command" "evalsched: a command is required" evalsched
expect_error "missing id" "evalsched: ID is required: see evalsched --help" evalsched watch
# Bounded lines (issue 16): CLI11's own range message for a positive number ran to 309 digits.
expect_error "bad params-b" "want a number from 0.001 to 1000000, got '-1'" evalsched submit "$ES"/ckpt/run7/step-100 --suite "$ES"/suite.toml --params-b -1
out=$(evalsched status "$(printf '9%.0s' $(seq 400))" 2>&1) && fail "a 400-digit id accepted"
[ ${#out} -lt 300 ] || fail "a 400-digit id's message is ${#out} bytes: $out"
out=$(curl -s --unix-socket "$EVALSCHED_SOCKET" "http://e/v1/$(printf 'a%.0s' $(seq 100000))" 2>&1 || true)
[ ${#out} -lt 400 ] || fail "a 100 KB URL's 404 is ${#out} bytes"
expect_error "unknown evaluation" "evaluation 99 not found" evalsched cancel 99
expect_error "bad report format" "format" evalsched report run7 --format xml
# A body the CLI would never send, straight to the socket.
out=$(curl -s --unix-socket "$EVALSCHED_SOCKET" -d '{"checkpoint": "/x/y/z", "suite": "[suite]\n", "uid": 0}' http://e/v1/evaluations 2>&1 || true)
[ -z "$out" ] || assert_contains "$out" "unknown field 'uid'" "raw API body"
assert_eq 0 "$(es_sql 'SELECT COUNT(*) FROM evaluations')" "evaluations stored"
assert_eq "" "$(squeue -h -t all -o '%j' | grep "^evalsched-$(es_sql 'SELECT id FROM instance')-")" "jobs submitted"
