#!/usr/bin/env bash
# Asking for more GPUs than any node has is refused at submit time with Slurm's own error.
. "$(dirname "$0")/lib.sh"

gpus=$(sinfo -h -N -o '%G' | sed -n 's/^gpu:\([0-9]*\).*/\1/p' | sort -n | tail -n 1)
[ -n "$gpus" ] || fail "sinfo shows no gpu gres"
if out=$(sbatch -N1 --gres=gpu:$((gpus + 1)) --wrap true 2>&1); then
  fail "sbatch accepted a job asking for $((gpus + 1)) GPUs: $out"
fi
assert_contains "$out" "Requested node configuration is not available" "sbatch's error"
