#!/usr/bin/env bash
# What a researcher sees while an evaluation waits and while slurmctld is away: with every GPU
# held by other jobs, `status` says "waiting for GPUs" and gives no ETA number; with slurmctld
# stopped, status shows the trouble and since when; once the GPUs come free the evaluation
# runs to the end, status counts datasets (and samples) and lists each one with its score, its lines fit 80
# columns, and `watch` in a log printed no line twice, nor one where only the ETA's time moved.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/evalsched-lib.sh"
es_setup
# Two datasets with their test-split sizes: progress counts their samples too.
sed -i -e '/^name = "mmlu"/a samples = 14042' -e '/^name = "arc_e"/a samples = 2376' "$ES"/suite.toml
es_start
eval "$("$ACME_SRC_DIR"/scripts/minicluster env)"
blockers=()
for n in n1 n2 n3; do
  blockers+=("$(sbatch --parsable -N1 -w "$n" --gres=gpu:4 -o /dev/null --wrap 'sleep 300')")
done
# Until status does (yes) or does not (no) show PATTERN, at most 120 s (a loaded machine is slow
# to answer, not wrong); fails naming WHAT. The status read whole, then grepped (lib.sh: no pipe
# into grep -q).
wait_status() { # yes|no pattern what
  local deadline=$((SECONDS + 120)) out
  while :; do
    out=$(evalsched status "$id" 2>&1)
    if grep -q "$2" <<<"$out"; then [ "$1" = yes ] && return 0; else [ "$1" = no ] && return 0; fi
    ((SECONDS < deadline)) || fail "$3 within 120 s: $out"
    sleep 0.3
  done
}
deadline=$((SECONDS + 120))
until [ "$(squeue -h -t R -j "$(IFS=,; echo "${blockers[*]}")" | wc -l)" -ge 3 ]; do
  ((SECONDS < deadline)) || fail "the 3 blockers (${blockers[*]}) not all running within 120 s: $(squeue -h -j "$(IFS=,; echo "${blockers[*]}")")"
  sleep 0.2
done
id=$(es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/suite.toml)
evalsched watch "$id" --interval 0.3 >"$ES"/watch.log 2>&1 &
watch_pid=$!
wait_status yes "waiting for GPUs" "status does not say 'waiting for GPUs' while every GPU is taken"
status=$(evalsched status "$id")
assert_contains "$status" "waiting for GPUs" "status while every GPU is taken"
assert_contains "$status" "progress: 0/20 datasets scored" "progress in datasets"
grep -q "ETA ~" <<<"$status" && fail "an ETA number while nothing can start: $status"
assert_contains "$status" "(0/16,418 samples of 2 datasets)" "samples where the suite gives them"
# Said once, since when and why; no "trials held" beside it, no "1 free GPUs".
grep -Eq "^waiting for GPUs since [0-9:]+: a trial needs 1 GPU on one node" <<<"$status" || fail "no waiting line with its start and why: $status"
grep -q "trials held" <<<"$status" && fail "waiting said twice (trials held): $status"
grep -q "1 free GPUs" <<<"$status" && fail "plural for one GPU: $status"

# slurmctld away: the trouble, with the time it began.
ctld_pid=$(cat "$ACME_MINICLUSTER_DIR"/run/slurmctld.pid)
kill "$ctld_pid"
deadline=$((SECONDS + 60))
while kill -0 "$ctld_pid" 2>/dev/null; do
  ((SECONDS < deadline)) || fail "slurmctld ($ctld_pid) still running 60 s after SIGTERM"
  sleep 0.1
done
wait_status yes "cannot reach slurmctld" "status does not say 'cannot reach slurmctld' while it is stopped"
status=$(evalsched status "$id")
grep -Eq "^trouble since [0-9:]+: cannot reach slurmctld" <<<"$status" || fail "no trouble line while slurmctld is stopped: $status"
assert_contains "$status" "ETA unknown: slurmctld unreachable" "the ETA while slurmctld is stopped"
slurmctld -f "$SLURM_CONF" 2>>"$ES"/ctld-restart.log || fail "slurmctld did not restart"
deadline=$((SECONDS + 120))
until scontrol ping >/dev/null 2>&1; do
  ((SECONDS < deadline)) || fail "slurmctld does not answer scontrol ping 120 s after its restart"
  sleep 0.2
done
wait_status no "cannot reach slurmctld" "status still says 'cannot reach slurmctld' after its restart"

scancel "${blockers[@]}"
assert_eq done "$(es_wait "$id" 150)" "evaluation state"
wait "$watch_pid" || fail "watch did not end with success: $(tail -3 "$ES"/watch.log)"
status=$(COLUMNS='' evalsched status "$id")
assert_contains "$status" "progress: 20/20 datasets scored (16,418/16,418 samples of 2 datasets)" "progress at the end"
grep -Eq "^[a-z0-9_]+ +scored +[a-z_]+=[0-9.]+" <<<"$status" || fail "no per-dataset line with a score: $status"
widest=$(echo "$status" | awk '{ if (length($0) > w) w = length($0) } END { print w }')
[ "$widest" -le 80 ] || fail "status lines up to $widest columns (not a terminal: 80)"
[ "$(evalsched status "$id" --long | awk '{ if (length($0) > w) w = length($0) } END { print w }')" -ge "$widest" ] || fail "--long is narrower"
grep -q "^DATASET|STATE|DETAIL|SCORE$" <<<"$(evalsched status "$id" -P)" || fail "-P has no parsable header"
# watch off a terminal: only changes (a line never repeats the one before it: a state may come
# back, as "waiting for GPUs" does after slurmctld returns), the trouble and its end among them.
dups=$(cut -d' ' -f2- "$ES"/watch.log | uniq -d)
[ -z "$dups" ] || fail "watch printed a line twice in a row: $dups"
# Nor for the ETA's clock alone (evalsched(1): time passing alone prints nothing).
clock_only=$(cut -d' ' -f2- "$ES"/watch.log | sed -E 's/ETA ~[0-9:]+/ETA ~T/' | uniq -d)
[ -z "$clock_only" ] || fail "watch printed a line again when only the ETA's time moved: $clock_only"
[ "$(wc -l <"$ES"/watch.log)" -lt 100 ] || fail "watch printed $(wc -l <"$ES"/watch.log) lines for 20 datasets"
grep -q "trouble since .*cannot reach slurmctld" "$ES"/watch.log || fail "watch did not show the trouble: $(cat "$ES"/watch.log)"
grep -q "resolved: " "$ES"/watch.log || fail "watch did not show the trouble's end"
grep -q "20/20 datasets scored" "$ES"/watch.log || fail "watch's last line: $(tail -1 "$ES"/watch.log)"
cp "$ES"/watch.log /tmp/evalsched-watch-transcript.log 2>/dev/null || true
