#!/usr/bin/env bash
# Every program prints one version line on stdout for --version and exits 0; the plugins' first
# line in slurmd's log is the same build, and a user's srun/sbatch does not show it.
. "$(dirname "$0")/lib.sh"

# What was built (configure's AC_INIT, as the Makefile carries it) and the Slurm that runs: the
# plugins load only into the Slurm release (major.minor) they were built against.
pkg=$(sed -n 's/^PACKAGE_VERSION = //p' "$ACME_BUILD_DIR/Makefile")
[ -n "$pkg" ] || fail "no PACKAGE_VERSION in $ACME_BUILD_DIR/Makefile"
slurm=$(sinfo --version | awk '{print $2}')
release=${slurm%.*}
[ -n "$release" ] || fail "sinfo --version printed no version"

check_version() { # program name
  local bin=$1 name=$2 out err rc
  [ -x "$bin" ] || fail "$bin not built"
  out=$("$bin" --version 2>"$ACME_TEST_TMP/$name.err")
  rc=$?
  err=$(cat "$ACME_TEST_TMP/$name.err")
  assert_eq 0 "$rc" "$name --version exit status"
  assert_eq "" "$err" "$name --version stderr"
  [ "$(wc -l <<<"$out")" -eq 1 ] || fail "$name --version: more than one line: $out"
  case $out in
    "$name $pkg (acme-slurm; built against Slurm $release."[0-9]*")") ;;
    *) fail "$name --version: expected '$name $pkg (acme-slurm; built against Slurm $release.N)', got '$out'" ;;
  esac
  echo "$out"
}

b=$ACME_BUILD_DIR
built=""
for prog in acct/gpuacct/gpuacct acct/faultdiag/faultdiag evalsched/cli/evalsched evalsched/daemon/evalschedd \
  evalsched-sim acme-gpu-sampler acme-faultguard-epilog acme-ckpt-find acme-health-gate; do
  built=$(check_version "$b/$prog" "$(basename "$prog")") || exit 1
  echo "$built"
done
# gpucheck exists only where configure found CUDA and NCCL.
if [ -x "$b/gpucheck" ]; then
  built=$(check_version "$b/gpucheck" gpucheck) || exit 1
  echo "$built"
fi
# The Slurm version every program reports, for the plugins' lines below.
built_slurm=${built##*built against Slurm }
built_slurm=${built_slurm%)}

# --- the plugins -------------------------------------------------------------------------------
log=$ACME_MINICLUSTER_DIR/log/slurmd-n1.log
[ -f "$log" ] || fail "no slurmd log $log"
before=$(wc -l <"$log")

# A user's terminal: nothing without -v. (With -v, srun 22.05 shows no SPANK verbose line here
# even at -vvv: not asserted.)
out=$(srun -N1 -w n1 true 2>&1) || fail "srun true failed: $out"
case $out in *"built against"*) fail "srun without -v printed the build line: $out" ;; esac
out=$(sbatch --parsable -N1 -w n1 -o /dev/null --wrap true 2>&1) || fail "sbatch refused: $out"
case $out in *"built against"*) fail "sbatch printed the build line: $out" ;; esac
id=${out%%;*}
wait_job "$id" >/dev/null

# slurmd's log (slurmstepd's and the job prolog's lines land there too): each plugin's first
# line since the jobs started is its build line.
new=$(tail -n +"$((before + 1))" "$log")
for plugin in gputrace faultguard; do
  first=$(grep -m1 " $plugin: " <<<"$new" || true)
  [ -n "$first" ] || fail "$plugin logged nothing in $log for the jobs: $new"
  assert_contains "$first" "$plugin: acme-slurm $pkg built against Slurm $built_slurm" "$plugin's first line in $log"
  echo "$plugin: $(grep -c "$plugin: acme-slurm" <<<"$new") build lines for the jobs' processes"
done
