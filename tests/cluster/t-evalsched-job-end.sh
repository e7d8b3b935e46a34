#!/usr/bin/env bash
# React to job ends, not only the timer (issue 18): with poll_interval=60, three trials that
# share one free GPU run one after the other; each next trial must be submitted when the one
# before it ends (the change poll), or the evaluation could not finish within the timeout.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/evalsched-lib.sh"
es_setup
sed -i 's/^poll_interval=.*/poll_interval=60/' "$ES"/evalsched.conf
echo "change_poll_interval=0.25" >>"$ES"/evalsched.conf
# Every GPU of the cluster but one is held by a blocker job.
blockers=()
for node in $(sinfo -h -N -o %N | sort -u); do
  gpus=4
  [ "$node" = n1 ] && gpus=3
  blockers+=("$(submit -w "$node" --gres=gpu:$gpus -t 10 -J blocker --wrap 'sleep 600')")
done
for b in "${blockers[@]}"; do wait_job_state "$b" RUNNING 120 "blocker job $b"; done
es_first_datasets 3 three
es_start
id=$(es_submit "$ES"/ckpt/run7/step-100 --suite "$ES"/three.toml)
# Two timer rounds (2 x 60 s) would be needed without the change poll.
assert_eq done "$(es_wait "$id" 90)" "the evaluation's state"
assert_eq "n1 n1 n1" "$(es_sql "SELECT group_concat(node, ' ') FROM attempts")" "where the trials ran"
refills=$(grep -c "a freed GPU got its next trial" "$ES"/daemon.log)
[ "$refills" -ge 2 ] || fail "the daemon logged $refills refills, not 2: $(tail -20 "$ES"/daemon.log)"
scancel "${blockers[@]}"
exit 0
