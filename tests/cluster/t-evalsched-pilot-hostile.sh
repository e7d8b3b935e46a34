#!/usr/bin/env bash
# Issue 33, read as an attacker with a login and no root, in mode = pilots:
# 1. LD_PRELOAD never runs as root. A user submits with LD_PRELOAD naming a library whose
#    constructor records its euid: `evalsched submit` leaves it out and says so; a raw API
#    client that sends it is refused with one line naming it; one slipped into the stored
#    environment (as a follow stored before the rule has it) never reaches a step. No process
#    the library loaded into ran as uid 0 (on 80c64f3 setpriv ran it as root).
# 2. A mistyped record stops nobody: the user's dataset overwrites its stage.json with wrong
#    types; that attempt fails naming the file and the field, and another user's evaluation,
#    running at the same time, finishes (on 80c64f3 every round threw, for everyone).
# 3. Another user's program on the serve port never sees a prompt: an impostor of uid nobody
#    answers every request on the pilot's only serve port; the server step refuses the port,
#    naming its owner, and the impostor receives no POST.
# Each step's srun messages are the user's own file in the attempt's directory.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/evalsched-lib.sh"
es_setup
user=$(test_user)
cli="$ACME_BUILD_DIR"/evalsched/cli/evalsched
# 3's impostor starts first and takes the first port of a range that nothing holds (a port
# another program happens to hold would fail both it and the server, and show nothing); that
# one port becomes the pilots' only serve port.
: >"$ES"/impostor.log && chmod 666 "$ES"/impostor.log
cat >"$ES"/impostor.py <<'PY'
import errno, os, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
log = open(sys.argv[3], "a", buffering=1)
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def answer(self):
        log.write(f"{self.command} {self.path}\n")
        body = b'{"data": [{"id": "fake"}], "choices": [{"text": "forged"}]}'
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
    do_GET = do_POST = answer
lo = int(sys.argv[1])
for port in range(lo, lo + 100):
    try:
        server = HTTPServer(("127.0.0.1", port), H)
    except OSError as e:
        if e.errno != errno.EADDRINUSE: raise
        continue
    with open(sys.argv[2] + ".tmp", "w") as f: f.write(f"{port}\n")
    os.rename(sys.argv[2] + ".tmp", sys.argv[2])
    server.serve_forever()
sys.exit(f"impostor: every port {lo}-{lo + 99} is in use")
PY
mkdir -p "$ES"/impostor && chmod 777 "$ES"/impostor
runuser -u nobody -- python3 "$ES"/impostor.py $(( ${ACME_MINICLUSTER_PORT:-16817} + 3300 )) "$ES"/impostor/port "$ES"/impostor.log &
impostor=$!
on_exit 'kill $impostor 2>/dev/null'
deadline=$((SECONDS + 60))
until [ -s "$ES"/impostor/port ]; do
  kill -0 "$impostor" 2>/dev/null || fail "the impostor did not start (its error is above)"
  ((SECONDS < deadline)) || fail "the impostor did not listen within 60 s"
  sleep 0.1
done
serve_port=$(cat "$ES"/impostor/port)
curl -sf -o /dev/null "http://127.0.0.1:$serve_port/v1/models" || fail "the impostor does not answer on port $serve_port"
: >"$ES"/impostor.log
cat >>"$ES"/evalsched.conf <<CONF
mode=pilots
serve_ports=$serve_port-$serve_port
CONF
as_user() { runuser -u "$user" -- env EVALSCHED_SOCKET="$EVALSCHED_SOCKET" "$@"; }
sql() { sqlite3 -batch -noheader -cmd ".timeout 5000" "$ES"/evalsched.db "$1"; }

# The attacker's library: one line "EUID COMM" per process it is loaded into.
mkdir -p "$ES"/marks && chmod 1777 "$ES"/marks
cat >"$ES"/mark.c <<C
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void mark(void) {
  char comm[64] = "?";
  FILE* c = fopen("/proc/self/comm", "r");
  if (c) { if (!fgets(comm, sizeof comm, c)) comm[0] = 0; fclose(c); }
  FILE* f = fopen("$ES/marks/marks", "a");
  if (f) { fprintf(f, "%d %s", (int)geteuid(), comm); fclose(f); }
}
C
cc -shared -fPIC -o "$ES"/libmark.so "$ES"/mark.c || skip "no C compiler for the preloaded library"
chmod 755 "$ES"/libmark.so
: >"$ES"/marks/marks && chmod 666 "$ES"/marks/marks

fake="$ACME_SRC_DIR/scripts/fake-eval --checkpoint {checkpoint} --task {dataset} --out {output}"
suite() { # name file datasets...
  local name=$1 file=$2 d
  shift 2
  { printf '[suite]\nname = "%s"\ncommand = "%s"\ngpus = 1\n' "$name" "$fake"
    for d in "$@"; do printf '\n[[dataset]]\nname = "%s"\nkind = "generation"\nprior = "3s"\n' "$d"; done; } >"$file"
  chmod 644 "$file"
}
suite preload "$ES"/preload.toml mmlu arc_e
# The user's dataset that overwrites the wrapper's stage.json (its own file) with wrong types
# (\173 and \175 are printf's { and }: a suite command's braces are placeholders).
cat >"$ES"/mistyped.toml <<TOML
[suite]
name = "mistyped"
gpus = 1
command = "$fake"

[[dataset]]
name = "evil"
kind = "generation"
prior = "3s"
command = "printf '\\\\173\\"copied\\": \\"yes\\", \\"bytes\\": null\\\\175' > \\"\$attempt_dir/stage.json\\"; $fake"

[[dataset]]
name = "fine"
kind = "generation"
prior = "3s"
TOML
chmod 644 "$ES"/mistyped.toml
suite other "$ES"/other.toml ceval gsm8k cmmlu
es_start

# 1a. evalsched submit leaves LD_PRELOAD out, visibly.
out=$(as_user LD_PRELOAD="$ES"/libmark.so "$cli" submit "$ES"/ckpt/run7/step-100 --suite "$ES"/preload.toml 2>&1) ||
  fail "the submission was refused: $out"
echo "$out"
assert_contains "$out" "evalsched: not carried to the trials: LD_PRELOAD" "what evalsched submit says"
id=$(echo "$out" | sed -n 's/^evaluation \([0-9]*\) submitted.*/\1/p')
[ -n "$id" ] || fail "no evaluation id in: $out"
# 1c. ...and slipped into its stored environment (as a follow stored before the rule would have
# it), it still never reaches a step.
sql "UPDATE evaluations SET environment = json_insert(COALESCE(environment, '[]'), '\$[#]', 'LD_PRELOAD=$ES/libmark.so') WHERE id = $id"
assert_contains "$(sql "SELECT environment FROM evaluations WHERE id = $id")" "LD_PRELOAD=" "the planted stored variable"
# 1b. A raw API client that sends it is refused, naming it.
body=$(python3 -c 'import json,sys; print(json.dumps({"checkpoint": sys.argv[1], "suite": open(sys.argv[2]).read(), "environment": ["PATH=/usr/bin:/bin", "LD_PRELOAD=" + sys.argv[3]]}))' \
  "$ES"/ckpt/run7/step-100 "$ES"/preload.toml "$ES"/libmark.so)
answer=$(as_user curl -s --unix-socket "$EVALSCHED_SOCKET" -X POST -H 'Content-Type: application/json' --data-binary "$body" http://evalschedd/v1/evaluations)
assert_contains "$answer" "environment variable LD_PRELOAD steers the dynamic loader or glibc" "the API's refusal"

# 2. The mistyped record (this user) and another user's evaluation (root's), at the same time.
mistyped=$(as_user "$cli" submit "$ES"/ckpt/run7/step-100 --suite "$ES"/mistyped.toml --name mistyped 2>&1 | sed -n 's/^evaluation \([0-9]*\) submitted.*/\1/p')
[ -n "$mistyped" ] || fail "the mistyped suite was not submitted"
other=$(es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/other.toml --name other)

assert_eq done "$(es_wait "$id" 180)" "the LD_PRELOAD evaluation"
assert_eq done "$(es_wait "$other" 180)" "the other user's evaluation, beside a mistyped record"
es_wait "$mistyped" 180 >/dev/null
reason=$(sql "SELECT a.reason FROM attempts a JOIN trials t ON t.id = a.trial WHERE t.evaluation = $mistyped AND t.datasets = 'evil' ORDER BY a.number DESC LIMIT 1")
assert_contains "$reason" "attempt failed: stage.json: field 'copied' is a string, not 0, 1 or a boolean" "the mistyped attempt's reason"
assert_eq done "$(sql "SELECT state FROM trials WHERE evaluation = $mistyped AND datasets = 'fine'")" "the same user's other dataset"

echo "processes the library was loaded into (euid comm):"
sort "$ES"/marks/marks | uniq -c
[ -s "$ES"/marks/marks ] || fail "the library never loaded: the test shows nothing"
if grep -q '^0 ' "$ES"/marks/marks; then fail "the user's LD_PRELOAD library ran as root: $(grep '^0 ' "$ES"/marks/marks | sort -u | tr '\n' ' ')"; fi
if grep -qE ' (srun|bash|fake-eval|sleep)$' "$ES"/marks/marks; then fail "LD_PRELOAD reached a step: $(sort -u "$ES"/marks/marks | tr '\n' ' ')"; fi
tag=$(sql "SELECT a.tag FROM attempts a JOIN trials t ON t.id = a.trial WHERE t.evaluation = $id AND a.state = 'done' LIMIT 1")
srun_out=$(sql "SELECT output_dir FROM evaluations WHERE id = $id")/attempts/$tag/srun.out
[ -f "$srun_out" ] || fail "no srun.out in the attempt's directory ($srun_out)"
assert_eq "$user" "$(stat -c %U "$srun_out")" "the owner of srun.out"

# 3. The impostor (uid nobody, started above) answers everything on the only serve port, and
# logs what it gets.
{ printf '[suite]\nname = "served"\ncommand = "%s"\ngpus = 1\n' "$fake"
  printf 'serve_command = "python3 %s {checkpoint} --host 127.0.0.1 --port {port} --tensor-parallel-size {gpus}"\n' "$ACME_SRC_DIR/tests/fakes/fake-vllm-server.py"
  printf 'client_command = "%s --base-url {base_url} --checkpoint {checkpoint} --task {dataset} --out {output}"\n' "$ACME_SRC_DIR/scripts/fake-eval"
  printf 'serve_probe = "/v1/models"\nserve_timeout = "1m"\n'
  printf '\n[[dataset]]\nname = "arc_c"\nkind = "generation"\nprior = "3s"\n'; } >"$ES"/served.toml
chmod 644 "$ES"/served.toml
served=$(as_user "$cli" submit "$ES"/ckpt/run7/step-100 --suite "$ES"/served.toml --name served 2>&1 | sed -n 's/^evaluation \([0-9]*\) submitted.*/\1/p')
[ -n "$served" ] || fail "the served suite was not submitted"
deadline=$((SECONDS + 120))
until grep -q "port $serve_port is held by uid 65534, not by this server" "$(sql "SELECT output_dir FROM evaluations WHERE id = $served")"/logs/*-serve.out 2>/dev/null; do
  ((SECONDS < deadline)) || { tail -n 20 "$ES"/daemon.log >&2; fail "no server step refused the impostor's port within 120 s"; }
  sleep 0.5
done
echo "the server step refused the port: $(grep -h "held by uid" "$(sql "SELECT output_dir FROM evaluations WHERE id = $served")"/logs/*-serve.out | head -n 1)"
evalsched cancel "$served" >/dev/null 2>&1
sleep 2
echo "what the impostor received: $(sort "$ES"/impostor.log | uniq -c | tr '\n' ' ')"
if grep -q '^POST' "$ES"/impostor.log; then fail "a prompt reached another user's listener: $(grep '^POST' "$ES"/impostor.log | head -n 3)"; fi
assert_eq 0 "$(sql "SELECT COUNT(*) FROM results WHERE evaluation = $served")" "scores taken from the impostor"
