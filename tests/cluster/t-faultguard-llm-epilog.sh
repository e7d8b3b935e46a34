#!/usr/bin/env bash
# The model path through the epilog (faultguard(8) LLM-ASSISTED DIAGNOSIS), against
# tests/fakes/fake-llm-server.py, a TEST DOUBLE of an OpenAI-compatible model server (it answers
# by the model name it is asked for). A failed job whose log the rules call unknown gets the
# model's answer stored in the spool (rule "llm:<model>", evidence source llm) and published in
# its AdminComment, as `faultdiag --job ID` shows it through slurmdbd; the node is not drained and the
# job is not requeued, although the model said infrastructure and the job asked for
# --auto-recover. The tail the server received has the job's secrets redacted.
# `faultdiag --suggest-rule ID` drafts a rule from that stored answer. Then a model server that
# stalls: the epilog gives up at llm_timeout, keeps the rules' answer and still publishes the
# record (the helper's own timeout= would otherwise kill it before it publishes).
. "$(dirname "$0")/lib.sh"

d=$ACME_TEST_TMP
conf=$ACME_MINICLUSTER_DIR/etc/plugstack.conf
server_pid=""
cleanup() {
  restore_plugstack
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  return 0
}
on_exit cleanup

python3 "$ACME_SRC_DIR/tests/fakes/fake-llm-server.py" "$d/llm.port" "$d/llm.request" &
server_pid=$!
deadline=$((SECONDS + 120))
until [ -s "$d/llm.port" ]; do
  kill -0 "$server_pid" 2>/dev/null || fail "the fake model server exited before it wrote its port"
  ((SECONDS < deadline)) || fail "the fake model server wrote no port within 120 s"
  sleep 0.1
done
endpoint=http://127.0.0.1:$(cat "$d/llm.port")

# Slurm's slurmstepd reads plugstack.conf afresh for each job's epilog: no restart needed.
use_model() { # model
  cp "$ACME_TEST_TMP/plugstack.conf.orig" "$conf"
  sed -i "/faultguard.so/ s|\$| llm_endpoint=$endpoint llm_model=$1 llm_timeout=3|" "$conf"
}
cp "$conf" "$ACME_TEST_TMP/plugstack.conf.orig"

# A failure no rule knows, with a secret in the log: the model is asked.
model=fake:infrastructure/network_error
use_model "$model"
script='echo "step 1200 loss 2.31"; echo "export HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"; echo "shardkv: replica quorum lost, write to block 77 failed after 3 attempts" >&2; exit 1'
job=$(submit -N1 --auto-recover=1 -o "$d/llm.out" --wrap "$script")
assert_eq FAILED "$(wait_job "$job" 60)" "job with an unknown failure"
node=$(job_nodes "$job")
assert_eq "infrastructure|network_error|requeue" "$(stored_diagnosis "$node" "$job")" "stored diagnosis (the model's)"
assert_eq "llm:$model" "$(spool_query "$node" "SELECT rule FROM diagnoses WHERE job_id = $job")" "stored rule"
evidence=$(spool_query "$node" "SELECT evidence FROM diagnoses WHERE job_id = $job")
assert_contains "$evidence" '"source":"llm"' "evidence marked as the model's"
assert_contains "$evidence" "replica quorum lost" "the model's evidence line"
assert_contains "$evidence" "the rules said unknown/unknown" "the rules' answer kept beside it"
# A model's answer never drains or requeues.
assert_eq 0 "$(job_field "$job" Restarts)" "restarts after the model said infrastructure"
assert_eq "" "$(spool_query "$node" "SELECT job_id FROM recoveries WHERE job_id = $job AND (drained OR requeued)")" "recovery rows"
case $(sinfo -h -N -n "$node" -o '%T') in
  *drain*) fail "$node drained on a model's answer: $(sinfo -h -N -n "$node" -o '%T %E')" ;;
esac
# What the server received: the tail, redacted.
[ -s "$d/llm.request" ] || fail "the model server received no request"
request=$(cat "$d/llm.request")
assert_contains "$request" "replica quorum lost" "the tail sent to the model"
case $request in *hf_AbCdEfGh*) fail "the token left the cluster: $request" ;; esac
assert_contains "$request" '"json_schema"' "a schema-constrained request"

# The record in slurmdbd, and faultdiag's view of it (through slurmdbd: no --spool-dir).
wait_record_nodes "$job" "$node"
acme_records "$job" | tail -n 1 | python3 -c "
import json, sys
r = json.load(sys.stdin)
dg = r['nodes']['$node']['diagnosis']
assert dg['reason'] == 'network_error' and dg['category'] == 'infrastructure', dg
assert dg['rule'] == 'llm:$model', dg
assert any(e.get('source') == 'llm' and 'replica quorum lost' in e['text'] for e in dg['evidence']), dg
assert not r['nodes']['$node'].get('recovery', {}).get('drained'), r
" || fail "AdminComment record of job $job: $(acme_records "$job")"
shown=$("$ACME_BUILD_DIR/acct/faultdiag/faultdiag" --job "$job" 2>&1) || fail "faultdiag --job $job: $shown"
assert_contains "$shown" "cause:      network_error (infrastructure)" "faultdiag --job (slurmdbd)"
assert_contains "$shown" "answer of:  model $model (LLM, not a rule" "faultdiag --job names the model"
shown=$("$ACME_BUILD_DIR/acct/faultdiag/faultdiag" --job "$job" --json 2>&1) || fail "faultdiag --job $job --json: $shown"
assert_contains "$shown" '"diagnosed_by":"llm"' "faultdiag --job --json"
assert_contains "$shown" "\"rule\":\"llm:$model\"" "faultdiag --job --json rule"

# --suggest-rule from the stored model answer: a draft that matches its own line.
draft=$("$ACME_BUILD_DIR/acct/faultdiag/faultdiag" --suggest-rule "$job" 2>&1) || fail "faultdiag --suggest-rule $job: $draft"
assert_contains "$draft" "answer of model $model" "draft says where it came from"
assert_contains "$draft" 'reason = "network_error"' "draft's reason"
assert_contains "$draft" 'replica quorum lost' "draft's pattern from the evidence line"
printf '%s\n' "$draft" >"$d/draft.toml"
mkdir -p "$d/rules.d"
cp "$ACME_SRC_DIR"/rules/*.toml "$d/rules.d/"
cp "$d/draft.toml" "$d/rules.d/50-site.toml"
redo=$(printf 'shardkv: replica quorum lost, write to block 912 failed after 5 attempts\n' |
  "$ACME_BUILD_DIR/acct/faultdiag/faultdiag" --rules "$d/rules.d" - 2>&1) || true
assert_contains "$redo" "network_error" "the draft, installed, decides a later run's log"
spooled=$(faultdiag --suggest-rule "$job" 2>&1) || fail "faultdiag --spool-dir --suggest-rule $job: $spooled"
assert_contains "$spooled" 'reason = "network_error"' "draft from the spool"

# A stalled model server: cut at llm_timeout; the rules' answer stays and the record is published.
use_model fake-slow
rm -f "$d/llm.request"
slow=$(submit -N1 --auto-recover=1 -o "$d/slow.out" --wrap "$script")
assert_eq FAILED "$(wait_job "$slow" 60)" "job while the model server stalls"
node=$(job_nodes "$slow")
wait_record_nodes "$slow" "$node"
assert_eq "unknown|unknown|none" "$(stored_diagnosis "$node" "$slow")" "stored diagnosis (the rules')"
rule=$(spool_query "$node" "SELECT IFNULL(rule, '') FROM diagnoses WHERE job_id = $slow")
case $rule in llm:*) fail "a stalled model's answer was stored: $rule" ;; esac
acme_records "$slow" | tail -n 1 | python3 -c "
import json, sys
r = json.load(sys.stdin)
assert r['nodes']['$node']['diagnosis']['reason'] == 'unknown', r
" || fail "AdminComment record of job $slow: $(acme_records "$slow")"
[ -s "$d/llm.request" ] || fail "the stalled server was never asked (the test would prove nothing)"
assert_eq 0 "$(job_field "$slow" Restarts)" "restarts with a stalled model"
