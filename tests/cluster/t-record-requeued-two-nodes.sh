#!/usr/bin/env bash
# A 2-node traced --auto-recover job whose GPU on the node that is NOT the batch host raises
# XID 79: slurmdbd's AdminComment holds, for the first run, both nodes' GPUs, the XID and the
# diagnosis with the drain; the second run (on healthy nodes) has its own record. Another user
# sees none of it.
. "$(dirname "$0")/lib.sh"

mkdir -p "$ACME_MINICLUSTER_DIR/nvml/scenarios"
# Slurm picks the lowest idle nodes: the first run lands on n1 (the batch host) and n2.
cat >"$ACME_MINICLUSTER_DIR/nvml/scenarios/n2.toml" <<'TOML'
[[gpu]]
minor = 0
util = 95
[[gpu]]
minor = 1
[[gpu]]
minor = 2
[[gpu]]
minor = 3
[[xid]]
at = 1.5
minor = 0
code = 79
TOML
on_exit 'rm -f "$ACME_MINICLUSTER_DIR/nvml/scenarios/n2.toml"'

ckpt=$ACME_TEST_TMP/ckpt
mkdir -p "$ckpt" && chmod 755 "$ckpt"
# Its first run must be on n1 and n2 (n2's XID above): from three idle nodes Slurm takes the
# lowest two. A node another test left completing sent it to n2 and n3 in a loaded run.
all_nodes_idle
id=$(submit -N2 --gres=gpu:1 --gpu-telemetry=1 --auto-recover=1 --ckpt-dir="$ckpt" -o "$ACME_TEST_TMP/job.out" --wrap "
if [ \"\$ACME_RESTART_COUNT\" = 0 ]; then
  mkdir -p $ckpt/step-1 && touch $ckpt/step-1/.complete
  $(until_go "$ACME_TEST_TMP/go"); echo 'RuntimeError: NCCL communicator was aborted' >&2; exit 1
fi
sleep 2")
# The premise first, as a clear line (not a record that names other nodes).
deadline=$((SECONDS + 120))
until [ -n "$(job_field "$id" NodeList | grep -v '^(null)$')" ] || ((SECONDS >= deadline)); do sleep 0.2; done
assert_eq "n[1-2]" "$(job_field "$id" NodeList)" "the first run's nodes (n2 raises the XID)"
# The first run fails once n2's sampler has seen the XID (lib.sh, until_go), not 5 s on.
wait_xid_seen "$id" n2
touch "$ACME_TEST_TMP/go"
deadline=$((SECONDS + 120))
while [ "$(job_field "$id" JobState)" != COMPLETED ]; do
  case $(job_field "$id" JobState) in FAILED | CANCELLED | TIMEOUT | NODE_FAIL) fail "job $id ended $(job_field "$id" JobState)" ;; esac
  ((SECONDS < deadline)) || fail "job $id not completed in 120 s"
  sleep 0.5
done
assert_eq 1 "$(job_field "$id" Restarts)" "restarts"
second_nodes=$(scontrol show hostnames "$(job_field "$id" NodeList)" | paste -sd' ')
assert_eq "n1 n3" "$second_nodes" "the second run's nodes (n2 drained)"
wait_record_nodes "$id" n1 n3

records=$(acme_records "$id")
assert_eq 2 "$(printf '%s\n' "$records" | grep -c .)" "one record per run (sacct -D)"
check() { # record python-expression what
  printf '%s' "$1" | python3 -c "import json,sys; r=json.load(sys.stdin); sys.exit(0 if ($2) else 1)" ||
    fail "$3: not true of $1"
}
first=$(printf '%s\n' "$records" | sed -n 1p)
second=$(printf '%s\n' "$records" | sed -n 2p)
check "$first" "r['v'] == 1 and r['job'] == $id and r['restart'] == 0" "first record's run"
check "$first" "r['expected'] == ['n1', 'n2'] and sorted(r['nodes']) == ['n1', 'n2']" "first record: both nodes"
check "$first" "all(len(r['nodes'][n]['gpus']) == 1 and r['nodes'][n]['gpus'][0]['samples'] > 0 for n in ('n1', 'n2'))" \
  "first record: each node's GPU with samples"
check "$first" "r['nodes']['n2']['gpus'][0]['util_max'] >= 90 and r['nodes']['n2']['gpus'][0]['xids'] == 1" "n2's busy GPU and its XID"
check "$first" "any(e['kind'] == 'xid' and e['code'] == 79 for e in r['nodes']['n2']['events'])" "n2's XID 79 event"
check "$first" "r['nodes']['n2']['diagnosis']['reason'] == 'gpu_lost' and r['nodes']['n2']['diagnosis']['category'] == 'infrastructure'" \
  "n2's diagnosis"
check "$first" "r['nodes']['n2']['recovery']['drained'] and 'XID 79' in r['nodes']['n2']['recovery']['drain_reason']" "n2's drain"
check "$first" "'diagnosis' in r['nodes']['n1'] and 'NCCL' in json.dumps(r['nodes']['n1']['diagnosis']['evidence'])" \
  "the batch host's diagnosis with its log evidence"
check "$first" "'communicator was aborted' not in json.dumps(r['nodes']['n2'])" "no log text on the node that did not read it"
check "$first" "r['nodes']['n1']['resumed_from'] == ''" "the first run started fresh"
check "$second" "r['nodes']['n1']['resumed_from'] == '$ckpt/step-1'" "the second run resumed from step-1"
check "$second" "r['restart'] == 1 and sorted(r['nodes']) == ['n1', 'n3'] and 'diagnosis' not in r['nodes']['n1']" \
  "second record: its own run, healthy"

# PrivateData=jobs: another user sees neither the job nor its record.
other=$(runuser -u nobody -- sacct -j "$id" -D -X -n -P -o JobID,AdminComment 2>&1)
assert_eq "" "$other" "sacct as nobody"
