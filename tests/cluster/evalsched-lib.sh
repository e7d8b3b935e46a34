# Helpers for the evalsched cluster tests (sourced after lib.sh): a private evalschedd on the
# minicluster, a checkpoint, the fake20 suite wired to scripts/fake-eval.
es_setup() {
  ES=$ACME_TEST_TMP/es
  # A Unix socket's path holds at most 107 bytes, and a checkout's path plus a test's name can
  # pass that: the socket lives in a short directory of its own, reachable by every test user.
  ES_SOCK_DIR=$(mktemp -d /tmp/es-sock.XXXXXX)
  chmod 755 "$ES_SOCK_DIR"
  mkdir -p "$ES"/{ckpt/run7/step-100,results,stage,fail,rules}
  chmod 755 "$ES" "$ES"/results "$ES"/ckpt "$ES"/ckpt/run7 "$ES"/ckpt/run7/step-100
  chmod 1777 "$ES"/stage "$ES"/fail
  head -c 200000 /dev/urandom >"$ES"/ckpt/run7/step-100/model.bin
  chmod 644 "$ES"/ckpt/run7/step-100/model.bin
  # Only the shipped rules: the daemon's retry decisions must not depend on work in progress.
  cp "$ACME_SRC_DIR"/rules/[0-9][0-9]-*.toml "$ES"/rules/
  sed -e "s|@FAKE_EVAL@|$ACME_SRC_DIR/scripts/fake-eval|" -e "s|@FAIL_DIR@|$ES/fail|" \
    "$ACME_SRC_DIR"/tests/data/suites/fake20.toml >"$ES"/suite.toml
  chmod 644 "$ES"/suite.toml
  cat >"$ES"/evalsched.conf <<CONF
socket=$ES_SOCK_DIR/evalschedd.sock
database=$ES/evalsched.db
results_dir=$ES/results
stage_dir=$ES/stage
stage_helper=$ACME_SRC_DIR/evalsched/daemon/evalsched-stage.sh
rules_dir=$ES/rules
poll_interval=1
margin=60
CONF
  export EVALSCHED_SOCKET=$ES_SOCK_DIR/evalschedd.sock
  on_exit es_teardown
}

es_start() {
  "$ACME_BUILD_DIR"/evalsched/daemon/evalschedd -D -f "$ES"/evalsched.conf >>"$ES"/daemon.log 2>&1 &
  ES_PID=$!
  # Until it answers (a loaded machine takes seconds to start it), while it runs, at most 120 s.
  local deadline=$((SECONDS + 120))
  until evalsched status >/dev/null 2>&1; do
    kill -0 "$ES_PID" 2>/dev/null || { cat "$ES"/daemon.log >&2; fail "evalschedd exited before it answered"; }
    ((SECONDS < deadline)) || { cat "$ES"/daemon.log >&2; fail "evalschedd did not answer status within 120 s"; }
    sleep 0.1
  done
}

# kill -9 of the daemon, then a fresh one on the same store (what a crash and a restart do).
es_kill9_restart() {
  kill -9 "$ES_PID"
  wait "$ES_PID" 2>/dev/null
  es_start
}

es_teardown() {
  [ -n "${ES_PID:-}" ] && kill "$ES_PID" 2>/dev/null
  local left
  left=$(squeue -h -o %i 2>/dev/null)
  [ -n "$left" ] && scancel $left 2>/dev/null
  [ -n "${ES_SOCK_DIR:-}" ] && rm -rf "$ES_SOCK_DIR"
  return 0
}

evalsched() { "$ACME_BUILD_DIR"/evalsched/cli/evalsched "$@"; }

es_sql() { sqlite3 -batch -noheader "$ES"/evalsched.db "$1"; }

# A suite of the first N datasets of $ES/suite.toml, readable by the daemon's helpers:
# written to $ES/NAME.toml.
es_first_datasets() { # N NAME
  awk -v max="$1" '/^\[\[dataset\]\]/ { n++ } n <= max' "$ES"/suite.toml >"$ES/$2.toml" && chmod 644 "$ES/$2.toml"
}

# Waits until evaluation $1 leaves 'active'; prints its state.
es_wait() { # id [timeout_s]
  local deadline=$((SECONDS + ${2:-120})) state
  while ((SECONDS < deadline)); do
    state=$(es_sql "SELECT state FROM evaluations WHERE id = $1")
    [ "$state" != active ] && { echo "$state"; return 0; }
    sleep 0.5
  done
  evalsched status "$1" >&2
  fail "evaluation $1 did not finish within ${2:-120} s"
}

# The id from "evaluation N submitted: ...".
es_submit() {
  local out
  out=$(evalsched submit "$@") || fail "evalsched submit $* refused: $out"
  echo "$out" | sed -n 's/^evaluation \([0-9]*\) submitted.*/\1/p'
}

# For the lm-eval adapter's tests: a checkpoint a harness loads (config.json beside the weights)
# and the lm_eval test double installed as pip installs lm-eval, in the venv $ES/lm
# (tests/fakes/harness/install-lm_eval).
es_lmeval_setup() {
  echo '{"architectures": ["LlamaForCausalLM"]}' >"$ES"/ckpt/run7/step-100/config.json
  chmod 644 "$ES"/ckpt/run7/step-100/config.json
  "$ACME_SRC_DIR"/tests/fakes/harness/install-lm_eval "$ES"/lm || fail "tests/fakes/harness/install-lm_eval failed"
}
