# shellcheck shell=bash disable=SC2154,SC2034 # sourced: the globals are the bench's
# evalsched-cluster-report.sh: the printed report of tests/bench/evalsched-cluster (sourced by
# it): the setup lines, each scenario's lines as soon as it has run, and sim/real. Reads the
# bench's globals and result arrays (es_*, b_*, mode_ok, mode_why).

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b != "" && b > 0) printf "%.2f", a / b; else print "n/a" }'; }
# met VALUE OP TARGET: `met` or `MISSED` (or n/a) for a printed target; OP within: |v - 1| <= t.
met() { awk -v v="$1" -v op="$2" -v t="$3" 'BEGIN { if (v == "n/a" || v == "") { print "n/a"; exit }
  ok = (op == "<=") ? v <= t : (op == ">=") ? v >= t : (v >= 1 - t && v <= 1 + t); print ok ? "met" : "MISSED" }'; }

report_setup() {
  echo "evalsched cluster bench: suite $suite_name (${#datasets[@]} datasets, $range s each, sum $sum s; a real 7B suite's times x $time_scale), checkpoint ${ckpt_mb} MiB, model load ${load_s} s (bytes / $load_bps B/s), $nodes nodes, $gpus GPUs, bf_interval=$bf_interval"
  echo "shared storage (evalsched-sim's defaults x $time_scale: a 7B checkpoint of 14e9 bytes over a 25 Gb/s NIC, 800 Gb/s aggregate): NIC $nic_bps B/s, aggregate $shared_bps B/s; one ${ckpt_mb} MiB read alone ${read_s} s (a real 7B one: 4.48 s x $time_scale)"
  echo "launch cost (submit -> command running -> end -> GPU free, median of $launch_samples): $launch s (command running after $launch_run s); a real cluster's ~15 s x $time_scale = $(awk -v k="$time_scale" 'BEGIN { printf "%.1f", 15 * k }') s"
  echo "  evalsched:        evalschedd poll_interval=1 margin=60, priors learned by a first evaluation (untimed), the second measured; mode=trials and mode=pilots; stage jobs read over the shared-storage model"
  echo "  sequential:       lm-evaluation-harness style: 1 job, 1 GPU, 1 read from shared storage, 1 load, the ${#datasets[@]} datasets in turn"
  echo "  opencompass:      --slurm --max-num-workers $workers: NumWorkerPartitioner -> $workers tasks, SlurmRunner srun --gres=gpu:1 -N1, no --time (DefaultTime=${deftime:-?}), jitter randint(0,10) s x $time_scale, retry 2; each task reads the checkpoint from shared storage and loads once; then the eval stage (one CPU srun per dataset)"
  echo "  opencompass_time: the same with extra_command --time=$oc_time (minutes) for every task"
  echo "  best:             tests/bench/evalsched-best over the daemon's measured trials + launch cost + load + staging"
}

report_scenario() {
  local m k base e best_r oc_r lat
  echo "[$scenario]"
  [ "$scenario" = busy ] && echo "  busy: before each run a training job holds the 4 GPUs of the last node for $busy_s s (--time=$busy_limit_m) and a $nodes-node job (--time=1) waits behind it: backfill reserves every node from $busy_limit_m min on"
  for m in "${mode_list[@]}"; do
    k=$scenario/$m
    if [ "${mode_ok[$m]}" = 1 ]; then
      echo "  evalsched $m: ${es_state[$k]} (${es_scores[$k]}/${#datasets[@]} scored, ${es_trials[$k]} trials) makespan ${es_make[$k]} s; best ${es_best[$k]} s (${es_best_kind[$k]}; optimum of ${es_cut[$k]}; LPT of its trials ${es_lpt[$k]} s; any policy >= ${es_any[$k]} s); staged ${es_bytes[$k]} bytes (${es_copies[$k]} copies)"
    else
      echo "  evalsched $m: n/a (${mode_why[$m]})"
    fi
  done
  for base in sequential opencompass opencompass_time; do
    k=$scenario/$base
    [ -n "${b_make[$k]:-}" ] && echo "  $base: makespan ${b_make[$k]} s (${b_scores[$k]}/${#datasets[@]} scored, ${b_failed[$k]} tasks failed); shared-storage bytes ${b_bytes[$k]:-0} (${b_copies[$k]} copies)"
  done
  e=${es_make[$scenario/trials]:-}
  best_r=$(ratio "$e" "${es_best[$scenario/trials]:-}")
  oc_r=$(ratio "${b_make[$scenario/opencompass]:-}" "$e")
  if [ "$scenario" = idle ]; then
    echo "$scenario evalsched/best $best_r (target <= 1.25: $(met "$best_r" '<=' 1.25))"
    echo "$scenario opencompass/evalsched $oc_r (target >= 1.5: $(met "$oc_r" '>=' 1.5))"
  else
    echo "$scenario evalsched/best $best_r"
    echo "$scenario opencompass/evalsched $oc_r (target >= 3: $(met "$oc_r" '>=' 3))"
  fi
  echo "$scenario opencompass_time/evalsched $(ratio "${b_make[$scenario/opencompass_time]:-}" "$e")"
  echo "$scenario sequential/evalsched $(ratio "${b_make[$scenario/sequential]:-}" "$e")"
  if [ "${mode_ok[pilots]:-0}" = 1 ] && [ -n "$e" ]; then
    echo "$scenario trials/pilots $(ratio "$e" "${es_make[$scenario/pilots]}")"
    echo "$scenario pilots/best $(ratio "${es_make[$scenario/pilots]}" "${es_best[$scenario/pilots]}") (pilots' own trials; any policy >= ${es_any[$scenario/pilots]} s)"
    echo "$scenario opencompass/pilots $(ratio "${b_make[$scenario/opencompass]:-}" "${es_make[$scenario/pilots]}")"
  else
    echo "$scenario trials/pilots n/a (${mode_why[pilots]:-mode pilots not run (ACME_BENCH_MODES)})"
  fi
  lat=${es_latency[$scenario/trials]:-}
  echo "$scenario job-end-to-next-submit latency: ${lat:-n/a (not exposed on the /metrics of this evalschedd)}"
}
