#!/usr/bin/env bash
# Held-but-idle GPUs, live (gputrace(8) IDLE GPUS), with the limits in the seconds form tests use:
# - idle_alert=3s: a 4-GPU job whose GPU 0 works, GPU 1 idles (utilisation 0), GPU 2 is busy
#   with no process on it and GPU 3 busy with only another process (pid 1, not the job's): the
#   sampler logs one alert naming GPUs 1,2,3, records an idle_alert event per GPU in the spool
#   and in the job's record, mails once (stall_mail=user, to --mail-user, through MailProg),
#   and its Prometheus file shows acme_gpu_idle_alert 1 for those GPUs, 0 for GPU 0. The job is
#   not cancelled (idle_cancel off) and completes.
# - idle_cancel=5s: a job whose every GPU idles is cancelled, with the reason in the sampler's
#   log and an idle_cancel event.
# - idle_exempt_qos: the same idle job in an exempt QOS is left alone and completes.
. "$(dirname "$0")/lib.sh"

chmod 777 "$ACME_TEST_TMP"
all_nodes_idle
scen=$ACME_MINICLUSTER_DIR/nvml/scenarios
use_scenario <<'TOML'
[[gpu]]
minor = 0
util = 95
[[gpu]]
minor = 1
util = 0
[[gpu]]
minor = 2
util = 95
processes = []
[[gpu]]
minor = 3
util = 95
processes = [1]
TOML
# n3: every GPU idle.
printf '[[gpu]]\nminor = %d\nutil = 0\n' 0 1 2 3 >"$scen/n3.toml"
on_exit 'rm -f "$ACME_MINICLUSTER_DIR/nvml/scenarios/n3.toml"; restore_plugstack'
use_mail_prog
gputrace_keys idle_alert=3s stall_mail=user

textfile=$ACME_MINICLUSTER_DIR/textfile
# Job a runs until the test has read its file (touch $go; at most 5 minutes), not 12 s a loaded
# node's sampler might not have alerted in.
go=$ACME_TEST_TMP/go
a=$(submit -N1 -w n1 --gres=gpu:4 --gpu-telemetry=0.5 --mail-user=idle-watch@example.org -o /dev/null \
  --wrap "$(until_go "$go")")
prom=$textfile/n1/acme-gputrace-$a.prom
deadline=$((SECONDS + 120))
until [ -s "$prom" ] && grep -q '^acme_gpu_idle_alert{gpu="3".*} 1$' "$prom"; do
  ((SECONDS < deadline)) || fail "no acme_gpu_idle_alert 1 for GPU 3 in $prom: $(cat "$prom" 2>&1)"
  sleep 0.3
done
text=$(cat "$prom")
assert_contains "$text" "# TYPE acme_gpu_idle_seconds gauge" "$prom"
for g in 1 2 3; do
  grep -q "^acme_gpu_idle_alert{gpu=\"$g\",.*Hostname=\"n1\"} 1$" "$prom" || fail "GPU $g not alerted in $prom: $text"
done
grep -q '^acme_gpu_idle_alert{gpu="0",.*} 0$' "$prom" || fail "GPU 0 (busy with the job) alerted in $prom: $text"
grep -q '^acme_gpu_idle_seconds{gpu="0",.*} 0$' "$prom" || fail "GPU 0 counted idle in $prom: $text"
# Bounded: one idle series per GPU, none labelled with the job (it is on acme_job_gpu_info).
assert_eq 4 "$(grep -c '^acme_gpu_idle_seconds{' "$prom")" "acme_gpu_idle_seconds series in $prom"
assert_eq 0 "$(grep -c '^acme_gpu_idle_[a-z]*{.*hpc_job=' "$prom")" "idle series labelled with the job"
touch "$go"
assert_eq COMPLETED "$(wait_job "$a" 60)" "job $a (alerted, idle_cancel off)"
log=$(spool_dir)/n1.sampler.log
grep -q "job $a: idle_alert: GPUs 1,2,3 held but idle for " "$log" || fail "no idle_alert line in $log: $(grep "job $a" "$log")"
assert_eq 1 "$(grep -c "job $a: idle_alert: " "$log")" "idle_alert lines for job $a"
assert_eq "1,2,3" "$(spool_query n1 "SELECT group_concat(gpu) FROM (SELECT gpu FROM gpu_events WHERE job_id = $a AND kind = 'idle_alert' ORDER BY gpu)")" \
  "GPUs with an idle_alert event in n1's spool"
sent=$(cat "$ACME_TEST_TMP/mail/sent" 2>/dev/null || true)
assert_eq 1 "$(printf '%s' "$sent" | grep -c .)" "mails sent (MailProg calls): $sent"
assert_contains "$sent" "-s|Slurm Job_id=$a Name=wrap GPUs held but idle on n1: GPUs 1,2,3 held but idle for " "the alert's subject"
assert_contains "$sent" "|idle-watch@example.org" "its recipient (the job's --mail-user)"
grep -q "job $a: idle_alert mail: mailed idle-watch@example.org" "$log" || fail "no mail line in $log"
# The job's record (slurmdbd) carries the events, so gpuacct and faultdiag see them anywhere.
wait_record_nodes "$a" n1
record=$(acme_records "$a" | tail -n 1)
assert_eq 3 "$(printf '%s' "$record" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(sum(1 for e in r["nodes"]["n1"].get("events", []) if e["kind"] == "idle_alert"))')" \
  "idle_alert events in job $a's record: $record"
view=$("$ACME_BUILD_DIR/acct/gpuacct/gpuacct" -j "$a" --detail 2>&1) || fail "gpuacct -j $a --detail: $view"
assert_contains "$view" "Held-but-idle GPUs (gputrace idle_alert, idle_cancel)" "gpuacct -j $a --detail"
assert_contains "$view" " n1 GPU 2: idle " "gpuacct -j $a --detail"
assert_eq 3 "$(grep -c 'alerted (idle_alert)' <<<"$view")" "alerts in gpuacct -j $a --detail: $view"

# idle_cancel: every GPU idle on n3.
gputrace_keys idle_alert=2s idle_cancel=5s
# (It would run 5 minutes: however late its sampler starts, the cancel comes first.)
b=$(submit -N1 -w n3 --gres=gpu:2 --gpu-telemetry=0.5 -o /dev/null --wrap 'sleep 300')
assert_eq CANCELLED "$(wait_job "$b" 300)" "job $b (every GPU idle past idle_cancel)"
log3=$(spool_dir)/n3.sampler.log
grep -q "job $b: idle_cancel: every GPU of the job on n3: GPUs 0,1 held but idle for [0-9]* s (utilisation <= 5 %, or no process of the job); job cancelled" "$log3" ||
  fail "no idle_cancel line in $log3: $(grep "job $b" "$log3")"
assert_eq 2 "$(spool_query n3 "SELECT COUNT(*) FROM gpu_events WHERE job_id = $b AND kind = 'idle_cancel'")" "idle_cancel events of job $b"

# An exempt QOS: the same idle job is left alone.
qos=$(sacctmgr -n -P show assoc user="$(id -un)" format=DefaultQOS 2>/dev/null | grep -m1 . || true)
qos=${qos:-normal}
gputrace_keys idle_alert=2s idle_cancel=4s "idle_exempt_qos=$qos"
# It runs until its sampler has watched it idle for 6 s (past idle_cancel=4s), not 9 s from its
# start: "left alone" means something only once the sampler has looked that long.
c=$(submit -N1 -w n3 --gres=gpu:1 --gpu-telemetry=0.5 -o /dev/null --wrap "$(until_go "$ACME_TEST_TMP/go-c")")
assert_eq "$qos" "$(job_field "$c" QOS)" "job $c's QOS"
wait_job_state "$c" RUNNING 60 "job $c"
deadline=$((SECONDS + $(wait_floor 60)))
until [ "$(spool_query n3 "SELECT MAX(ts) - MIN(ts) >= 6 FROM gpu_samples WHERE job_id = $c" 2>/dev/null)" = 1 ]; do
  ((SECONDS < deadline)) || fail "job $c's sampler on n3 did not sample it for 6 s within $(wait_floor 60) s (job $(job_field "$c" JobState))"
  sleep 0.3
done
touch "$ACME_TEST_TMP/go-c"
assert_eq COMPLETED "$(wait_job "$c" 60)" "job $c (exempt QOS)"
grep -q "job $c: idle GPUs: exempt (QOS $qos); no idle alert or cancel" "$log3" || fail "no exemption line in $log3"
assert_eq 0 "$(spool_query n3 "SELECT COUNT(*) FROM gpu_events WHERE job_id = $c AND kind LIKE 'idle_%'")" "idle events of the exempt job $c"
