#!/usr/bin/env bash
# The shims plugstack.conf names (gputrace.so, faultguard.so) without their implementations
# beside them (a half-copied install): every process that needed one says so in one line, and
# jobs run, are submitted with the plugins' options, and end as they would without the plugins.
. "$(dirname "$0")/lib.sh"

conf=$ACME_MINICLUSTER_DIR/etc/plugstack.conf
cp "$conf" "$ACME_TEST_TMP/plugstack.conf.orig"
on_exit restore_plugstack
plugins=$ACME_TEST_TMP/plugins
mkdir -p "$plugins"
chmod 755 "$ACME_TEST_TMP" "$plugins"
cp "$ACME_BUILD_DIR/spank/.libs/gputrace.so" "$ACME_BUILD_DIR/spank/.libs/faultguard.so" "$plugins/"
sed -i -E "s|^(optional )[^ ]*/(gputrace\|faultguard)\.so |\1$plugins/\2.so |" "$conf"
grep -q "^optional $plugins/gputrace.so " "$conf" && grep -q "^optional $plugins/faultguard.so " "$conf" ||
  fail "could not point plugstack.conf at the bare shims: $(cat "$conf")"

log=$ACME_MINICLUSTER_DIR/log/slurmd-n1.log
before=$(wc -l <"$log")
# A plain step: nothing needs an implementation before the epilog.
out=$(srun -N1 -w n1 true 2>&1) || fail "srun true failed with the bare shims: $out"
# Options given: submission accepts them unchecked (one line on the terminal), the job runs.
out=$(srun -N1 -w n1 --gres=gpu:1 --gpu-telemetry=1 --auto-recover=1 sh -c 'echo ran' 2>&1) ||
  fail "srun with the plugins' options failed with the bare shims: $out"
assert_contains "$out" "ran" "the job's output"
assert_contains "$out" "gputrace: cannot load $plugins/gputrace_impl.so" "srun's line for the missing gputrace implementation"
# (sbatch's own line about the implementation goes to stderr, apart from the job id.)
id=$(sbatch --parsable -N1 -w n1 --gres=gpu:1 --gpu-telemetry=1 -o /dev/null --wrap 'exit 3' 2>"$ACME_TEST_TMP/sbatch.err") ||
  fail "sbatch refused with the bare shims: $(cat "$ACME_TEST_TMP/sbatch.err")"
id=${id%%;*}
assert_eq FAILED "$(wait_job "$id")" "a failing job's end with the bare shims"
# slurmd's lines for both, once written (its log is not ours to flush).
deadline=$((SECONDS + 60))
until new=$(tail -n +"$((before + 1))" "$log") && grep -q "gputrace: cannot load" <<<"$new" && grep -q "faultguard: cannot load" <<<"$new"; do
  ((SECONDS < deadline)) || break
  sleep 0.3
done
for plugin in gputrace faultguard; do
  assert_contains "$new" "$plugin: cannot load $plugins/${plugin}_impl.so" "slurmd's log for the missing $plugin implementation"
done
# Nothing ran that needs the implementation: no sampler, no diagnosis for the failed job.
assert_no_sampler "$id"
[ -z "$(spool_query n1 "SELECT job_id FROM diagnoses WHERE job_id = $id" 2>/dev/null)" ] ||
  fail "job $id was diagnosed without faultguard's implementation"
echo "bare shims: jobs ran; $(grep -c 'cannot load' <<<"$new") lines in slurmd's log"
