#!/usr/bin/env bash
# Pilots that serve, and tail re-sharding (issue 18, mode = pilots): a suite with serve_command
# loads the model once per pilot (tests/fakes/fake-vllm-server.py, a test double of vLLM, logs
# each load) and runs every dataset as a client step against it (scripts/fake-eval
# --base-url). Every score arrives; no pilot loaded the model twice, and fewer loads happened
# than datasets ran; a killed server step puts the trial it served back (the attempt lost, not
# counted) and the trial still finishes in another pilot; a daemon killed -9 adopts the servers
# that answered. A long shardable dataset among short ones is re-sharded for the tail when a
# pilot takes it, and its metric job scores the pieces: fake-eval --score refuses predictions
# that do not cover the dataset exactly once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/evalsched-lib.sh"
es_setup
cat >>"$ES"/evalsched.conf <<CONF
mode=pilots
serve_ports=20100-20199
tail_min_piece=4
CONF
mkdir -p "$ES"/loads && chmod 1777 "$ES"/loads
printf 'long\t24\nslowc\t14\n' >"$ES"/serve.durations
for d in mmlu cmmlu ceval arc_e gsm8k; do printf '%s\t2\n' "$d" >>"$ES"/serve.durations; done
chmod 644 "$ES"/serve.durations
# Suite priors are 7B-class on one GPU; these trials run on four (about a tenth of the prior):
# long about 24 s, slowc 14 s, the rest 2 s, as serve.durations makes them.
fake="$ACME_SRC_DIR/scripts/fake-eval --checkpoint {checkpoint} --task {dataset} --out {output}"
{
  printf '[suite]\nname = "serve"\ncommand = "%s --shard {shard} --num-shards {num_shards}"\ngpus = 4\n' "$fake"
  printf 'serve_command = "python3 %s {checkpoint} --host 127.0.0.1 --port {port} --tensor-parallel-size {gpus} --load-log %s"\n' \
    "$ACME_SRC_DIR/tests/fakes/fake-vllm-server.py" "$ES/loads/loads.txt"
  printf 'client_command = "%s --base-url {base_url} --checkpoint {checkpoint} --task {dataset} --out {output} --shard {shard} --num-shards {num_shards} --durations %s"\n' \
    "$ACME_SRC_DIR/scripts/fake-eval" "$ES/serve.durations"
  printf 'serve_probe = "/v1/models"\nserve_timeout = "2m"\n'
  printf '\n[[dataset]]\nname = "long"\nkind = "generation"\nprior = "220s"\nshard = true\nsamples = 100\n'
  printf 'metric_command = "%s --score --task {dataset} --out {output}"\n' "$ACME_SRC_DIR/scripts/fake-eval"
  printf '\n[[dataset]]\nname = "slowc"\nkind = "generation"\nprior = "130s"\n'
  for d in mmlu cmmlu ceval arc_e gsm8k; do printf '\n[[dataset]]\nname = "%s"\nkind = "generation"\nprior = "18s"\n' "$d"; done
} >"$ES"/serve.toml
chmod 644 "$ES"/serve.toml
es_start
id=$(es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/serve.toml --params-b 7)
[ -n "$id" ] || fail "the evaluation was not submitted"
assert_eq 1 "$(es_sql "SELECT served FROM evaluations WHERE id = $id")" "the evaluation is served"

# Kill the server step of the pilot whose client step runs "slowc".
deadline=$((SECONDS + 90))
while :; do
  read -r job tag < <(es_sql "SELECT p.job_id, p.tag FROM attempts a JOIN trials t ON t.id = a.trial JOIN pilots p ON p.id = a.pilot
                              WHERE t.datasets = 'slowc' AND a.state = 'running' LIMIT 1" | tr '|' ' ')
  [ -n "${job:-}" ] && break
  ((SECONDS < deadline)) || { cat "$ES"/daemon.log >&2; fail "no client step of 'slowc' started within 90 s"; }
  sleep 0.2
done
sleep 2
server_step=$(squeue -h -s -j "$job" -o '%i %j' | awk -v n="$tag-serve" '$2 == n { print $1 }')
[ -n "$server_step" ] || fail "pilot $job has no server step named $tag-serve: $(squeue -h -s -j "$job" -o '%i %j')"
scancel "$server_step" || fail "scancel $server_step refused"
echo "killed server step $server_step while slowc ran against it"
# kill -9 of the daemon while slowc reruns against another pilot's server: the restarted
# daemon adopts the servers that answered (server.json) and loads nothing again.
deadline=$((SECONDS + 90))
until [ -n "$(es_sql "SELECT a.id FROM attempts a JOIN trials t ON t.id = a.trial WHERE t.datasets = 'slowc' AND a.state = 'running' AND a.number = 2")" ]; do
  ((SECONDS < deadline)) || { cat "$ES"/daemon.log >&2; fail "slowc did not start again within 90 s"; }
  sleep 0.2
done
es_kill9_restart

assert_eq done "$(es_wait "$id" 240)" "evaluation state"
assert_eq 7 "$(es_sql "SELECT COUNT(*) FROM results WHERE evaluation = $id")" "scores stored"
assert_eq 0 "$(es_sql "SELECT COUNT(*) FROM attempts WHERE pilot IS NULL")" "trial jobs of their own in pilots mode"
# The killed server: slowc's step lost, not counted; its rerun in another pilot done.
assert_eq 1 "$(es_sql "SELECT COUNT(*) FROM attempts a JOIN trials t ON t.id = a.trial WHERE t.datasets = 'slowc' AND a.state = 'lost'
                       AND a.reason LIKE '%server stopped answering%'")" "slowc's attempts lost to the killed server"
assert_eq 1 "$(es_sql "SELECT attempts FROM trials WHERE datasets = 'slowc'")" "attempts counted for slowc"
rerun=$(es_sql "SELECT a.job_id FROM attempts a JOIN trials t ON t.id = a.trial WHERE t.datasets = 'slowc' AND a.state = 'done'")
[ -n "$rerun" ] && [ "$rerun" != "$job" ] || fail "slowc did not rerun in another pilot (done in job '$rerun', its server killed in $job)"
# evalsched status names each trial's step in its pilot, as sacct does.
grep -qE " $rerun\.[0-9]+ " <<<"$(evalsched status "$id" --long)" || fail "evalsched status does not show slowc's step in job $rerun: $(evalsched status "$id" --long)"
# Every client step asked its pilot's server: the trial commands are the client command.
assert_eq 0 "$(es_sql "SELECT COUNT(*) FROM trials WHERE evaluation = $id AND command NOT LIKE '%--base-url%'")" "trials not run as clients"

# Tail re-sharding: "long" runs as pieces, all done, and its metric job scored them all.
pieces=$(es_sql "SELECT COUNT(*) FROM trials WHERE evaluation = $id AND datasets = 'long'")
[ "$pieces" -ge 2 ] || fail "long was not re-sharded for the tail ($pieces trial)"
assert_eq "$pieces" "$(es_sql "SELECT COUNT(*) FROM trials WHERE evaluation = $id AND datasets = 'long' AND state = 'done'")" "pieces of long done"
# A piece may be re-cut again later in the tail (halves, then eighths): together they cover it once.
assert_eq 1.0 "$(es_sql "SELECT ROUND(SUM(1.0 / num_shards), 6) FROM trials WHERE evaluation = $id AND datasets = 'long'")" "the pieces' share of long"
grep -qE "trial run7/step-100/long \\([0-9]+ s\\) re-sharded into" "$ES"/daemon.log || fail "the daemon's log does not say it re-sharded long"
assert_eq done "$(es_sql "SELECT state FROM metric_jobs WHERE evaluation = $id AND dataset = 'long'")" "long's metric job"
assert_eq "$pieces" "$(es_sql "SELECT COUNT(*) FROM metric_trials mt JOIN metric_jobs m ON m.id = mt.metric WHERE m.evaluation = $id")" \
  "pieces long's metric job waited for"

# One load per pilot: every load line names a distinct pilot job (sacct's witness), each pilot
# that ran a client step loaded once, and the model was loaded fewer times than trials ran.
cat "$ES"/loads/loads.txt
pilots=$(es_sql "SELECT job_id FROM pilots WHERE evaluation = $id AND job_id IS NOT NULL ORDER BY job_id")
loads=$(wc -l <"$ES"/loads/loads.txt)
assert_eq "$loads" "$(awk '{ split($2, s, "."); print s[1] }' "$ES"/loads/loads.txt | sort -u | wc -l)" "pilot jobs among the loads (a pilot loaded twice)"
steps=0
for j in $pilots; do
  ran=$(es_sql "SELECT COUNT(*) FROM attempts WHERE job_id = $j AND pilot IS NOT NULL")
  [ "$ran" -gt 0 ] || continue
  steps=$((steps + ran))
  assert_eq 1 "$(awk -v j="$j" '{ split($2, s, "."); if (s[1] == j) n++ } END { print n + 0 }' "$ES"/loads/loads.txt)" "loads in pilot $j"
  # sacct: the server step and the client steps of the pilot.
  grep -q -- "-serve|" <<<"$(sacct -n -P -j "$j" -o JobID,JobName,State)" || fail "sacct shows no server step in pilot $j: $(sacct -n -P -j "$j" -o JobID,JobName,State)"
done
[ "$loads" -lt "$steps" ] || fail "the model was loaded $loads times for $steps client steps"
grep -q "adopted its server on port" "$ES"/daemon.log || fail "the restarted daemon adopted no server"
# The servers end with their pilots: once every pilot of the evaluation has ended, none runs.
deadline=$((SECONDS + 60))
until [ "$(es_sql "SELECT COUNT(*) FROM pilots WHERE evaluation = $id AND state != 'ended'")" = 0 ] && ! pgrep -f "fake-vllm-server.py $ES/" >/dev/null; do
  ((SECONDS < deadline)) || fail "servers still run after their evaluation ended: $(pgrep -af "fake-vllm-server.py $ES/")"
  sleep 0.5
done
echo "loads $loads, client steps $steps, pieces of long $pieces"

# A server that never answers: each pilot is released with the reason, and after three pilots
# in a row the evaluation's trials fail with it (no pilot after pilot forever).
{
  printf '[suite]\nname = "deadserve"\ncommand = "%s"\ngpus = 4\n' "$fake"
  printf 'serve_command = "bash -c %s -- {checkpoint} {port}"\n' "'echo cannot load \$1 >&2; exit 3'"
  printf 'client_command = "%s --base-url {base_url} --task {dataset} --out {output}"\n' "$ACME_SRC_DIR/scripts/fake-eval"
  printf '\n[[dataset]]\nname = "mmlu"\nkind = "generation"\nprior = "18s"\n'
} >"$ES"/deadserve.toml
chmod 644 "$ES"/deadserve.toml
dead=$(es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/deadserve.toml --params-b 7 --name run9)
[ -n "$dead" ] || fail "the evaluation with a dead server was not submitted"
assert_eq failed "$(es_wait "$dead" 120)" "state of the evaluation whose server never answers"
assert_contains "$(es_sql "SELECT reason FROM trials WHERE evaluation = $dead")" "serve_command never answered in 3 pilots in a row" "its trial's reason"
assert_eq 3 "$(es_sql "SELECT COUNT(*) FROM pilots WHERE evaluation = $dead AND reason LIKE 'its server ended before it answered (status 1)%'")" \
  "pilots released for their dead server"
assert_eq 0 "$(es_sql "SELECT COUNT(*) FROM attempts a JOIN trials t ON t.id = a.trial WHERE t.evaluation = $dead")" "attempts of its trial"
grep -q "cannot load" "$ES"/results/"$dead"/logs/*-serve.out || fail "the server's own output is not in its log"
