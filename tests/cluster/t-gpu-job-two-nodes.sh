#!/usr/bin/env bash
# A 2-node `sbatch --gres=gpu:2` job sees two GPUs on each node, through Slurm's own variables.
. "$(dirname "$0")/lib.sh"

out=$ACME_TEST_TMP/gpu-job.out
id=$(submit -N2 --gres=gpu:2 -o "$out" --wrap \
  'srun -l bash -c "echo node=\$SLURMD_NODENAME cvd=\$CUDA_VISIBLE_DEVICES job_gpus=\$SLURM_JOB_GPUS step_gpus=\$SLURM_STEP_GPUS"')
assert_eq COMPLETED "$(wait_job "$id")" "job $id state"

lines=$(grep -c 'node=' "$out")
assert_eq 2 "$lines" "task lines in $out"
for node in $(scontrol show hostnames "$(job_field "$id" NodeList)"); do
  line=$(grep "node=$node " "$out") || fail "no task ran on $node: $(cat "$out")"
  for var in cvd job_gpus step_gpus; do
    value=$(sed -n "s/.* $var=\([^ ]*\).*/\1/p" <<<"$line")
    count=$(tr ',' '\n' <<<"$value" | grep -c .)
    assert_eq 2 "$count" "$var on $node ($value)"
  done
done
