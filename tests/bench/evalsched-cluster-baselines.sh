# shellcheck shell=bash disable=SC2154,SC2034 # sourced: the globals are the bench's
# evalsched-cluster-baselines.sh: the baselines of tests/bench/evalsched-cluster (sourced by it;
# see its header for what each models and why). Reads the bench's globals: top, dir, ck (the
# checkpoint on shared storage), datasets, all_tasks, sum, load_bps, workers, oc_time,
# time_scale, scenario, shared_args (scripts/fake-eval's shared-storage model), and its
# background_up/background_down/wait_queue_empty/now/secs. Sets b_make, b_scores, b_bytes,
# b_copies, b_failed (associative arrays the bench declares) under "$scenario/<baseline>".

# Bytes read from shared storage, appended to OUT/bytes by each job that reads the checkpoint.
bytes_line() { echo "find '$1' -type f -printf '%s\n' | awk '{ s += \$1 } END { printf \"%.0f\n\", s }' >> '$2/bytes'"; }

# seq_script CKPT OUT -> the sequential job: one read, one load, every dataset in turn.
seq_script() {
  echo '#!/bin/bash'
  echo 'set -u'
  bytes_line "$1" "$2"
  echo "'$top/scripts/fake-eval' --checkpoint '$1' --tasks $all_tasks --out '$2/out' --durations '$dir/suite.durations' --load-bandwidth $load_bps $shared_args || exit 1"
}

# oc_script CKPT OUT I -> OpenICLInferTask I: builds the model (weights read from shared storage,
# then loaded), then its slice (1/W) of every dataset in turn.
oc_script() {
  local share
  share=$(awk -v s="$sum" -v w="$workers" 'BEGIN { printf "%.3f", s / w }')
  echo '#!/bin/bash'
  echo 'set -u'
  bytes_line "$1" "$2"
  echo "'$top/scripts/fake-eval' --checkpoint '$1' --tasks $all_tasks --out '$2/task-$3' --seconds $share --load-bandwidth $load_bps $shared_args || exit 1"
}

oc_jitter() { awk -v r=$((RANDOM % 11)) -v k="$time_scale" 'BEGIN { printf "%.3f", r * k }'; }

# run_oc OUT TIMEFLAG: SlurmRunner: W concurrent srun, each after its jitter, retry 2; then the
# eval stage: NaivePartitioner, one CPU task per dataset through the same runner (srun without
# GPUs, after its jitter), once every infer task has ended. The stand-in's scorer only reads
# the predictions (fake-eval's scores are written by the infer task).
run_oc() {
  local out=$1 tflag=$2 i pids=() p d
  run_task() {
    local i=$1 _try d ok
    for _try in 0 1 2; do
      sleep "$(oc_jitter)"
      srun -N1 --gres=gpu:1 $tflag -u -J "opencompass-infer-$i" bash "$out"/task-$i.sh >>"$out"/task-$i.out 2>&1
      ok=1
      for d in "${datasets[@]}"; do [ -f "$out/task-$i/$d/result.json" ] || ok=0; done
      [ $ok = 1 ] && return 0
    done
    return 1
  }
  eval_task() {
    sleep "$(oc_jitter)"
    srun -N1 $tflag -u -J "opencompass-eval-$1" bash -c "cat '$out'/task-*/'$1'/predictions.txt >/dev/null" >>"$out"/eval.out 2>&1
  }
  oc_failed=0
  for ((i = 0; i < workers; i++)); do
    run_task $i &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || oc_failed=$((oc_failed + 1)); done
  pids=()
  for d in "${datasets[@]}"; do
    while (($(jobs -rp | wc -l) >= workers)); do sleep 0.1; done
    eval_task "$d" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
}

# baseline_sequential: lm-evaluation-harness style, one sbatch job on one GPU.
baseline_sequential() {
  local out=$sq/$scenario t0 t1 j deadline k
  mkdir -p "$out"
  chmod 777 "$out"
  seq_script "$ck" "$out" >"$out"/job.sh
  wait_queue_empty
  background_up || { echo "evalsched bench: cannot start the background jobs"; exit 1; }
  t0=$(now)
  j=$(sbatch --parsable -J lm-eval-sequential --gres=gpu:1 -N1 -o "$out"/job.out "$out"/job.sh) ||
    { echo "evalsched bench: sbatch refused the sequential job"; exit 1; }
  j=${j%%;*}
  deadline=$((SECONDS + 1200))
  while [ -n "$(squeue -h -j "$j" -o %i 2>/dev/null)" ] && ((SECONDS < deadline)); do sleep 0.2; done
  t1=$(now)
  background_down
  k=$scenario/sequential
  b_make[$k]=$(secs "$t0" "$t1")
  b_scores[$k]=$(ls "$out"/out/*/result.json 2>/dev/null | wc -l)
  b_bytes[$k]=$(awk '{ s += $1 } END { printf "%.0f", s }' "$out"/bytes 2>/dev/null)
  b_copies[$k]=$(wc -l <"$out"/bytes 2>/dev/null || echo 0)
  b_failed[$k]=0
}

# baseline_opencompass opencompass|opencompass_time
baseline_opencompass() {
  local base=$1 out=$oc/$scenario-$1 i tflag='' t0 t1 k n c d
  mkdir -p "$out"
  chmod 777 "$out"
  for ((i = 0; i < workers; i++)); do oc_script "$ck" "$out" $i >"$out"/task-$i.sh; done
  [ "$base" = opencompass_time ] && tflag=--time=$oc_time
  wait_queue_empty
  background_up || { echo "evalsched bench: cannot start the background jobs"; exit 1; }
  t0=$(now)
  run_oc "$out" "$tflag"
  t1=$(now)
  background_down
  k=$scenario/$base
  b_make[$k]=$(secs "$t0" "$t1")
  n=0
  for d in "${datasets[@]}"; do
    c=$(ls "$out"/task-*/"$d"/result.json 2>/dev/null | wc -l)
    [ "$c" -eq "$workers" ] && n=$((n + 1))
  done
  b_scores[$k]=$n
  b_bytes[$k]=$(awk '{ s += $1 } END { printf "%.0f", s }' "$out"/bytes 2>/dev/null)
  b_copies[$k]=$(wc -l <"$out"/bytes 2>/dev/null || echo 0)
  b_failed[$k]=$oc_failed
}
