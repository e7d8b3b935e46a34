#!/usr/bin/env bash
# timeout: 3600
# alone: installs the packages into /usr and /etc/slurm, which other tests' commands may read
# The Debian packages, built from this tree and installed, work on a real Slurm:
# dpkg-buildpackage -b in a copy of the tree's committed and working files yields exactly
# acme-slurm-plugins, acme-slurm-tools and acme-evalschedd with their essential files,
# conffiles and Slurm dependency; after dpkg -i, the snippet's spool is the one the installed
# gpuacct reads by default, and a second minicluster that loads the installed plugins and
# sampler (scripts/minicluster up --prefix /usr) traces a GPU job that the installed gpuacct
# shows. The packages and the second minicluster are removed again at the end, whatever happens.
# The build takes 4-5 minutes on two idle cores, 12 when other builds share them, and 20 or more
# with gcc 14/16 inside scripts/compat's roots: it compiles through ccache where there is one
# (Debian's /usr/lib/ccache in PATH, in a build directory whose name does not change between
# runs), so a run after the first takes a minute or two. On a machine loaded past that (load
# 30 with other engineers' builds) it took over 20 minutes, and a fixed limit killed it while it
# still compiled; so the build is stopped when its log has been silent for 10 minutes, not at a
# set time, and the timeout header above (tests/cluster/run) is only the ceiling.
. "$(dirname "$0")/lib.sh"

src=$ACME_SRC_DIR
packages=(acme-slurm-plugins acme-slurm-tools acme-evalschedd)

# debian/changelog's upstream version must be AC_INIT's: checked first, before any skip, so a
# release that bumps one and not the other fails wherever the cluster tests run.
ac_version=$(sed -n 's/^AC_INIT(\[[^]]*\], *\[\([^]]*\)\].*/\1/p' "$src/configure.ac")
deb_version=$(sed -n '1s/^acme-slurm (\([^)]*\)).*/\1/p' "$src/debian/changelog")
[ -n "$ac_version" ] || fail "no version in configure.ac's AC_INIT"
[ -n "$deb_version" ] || fail "no 'acme-slurm (VERSION)' on debian/changelog's first line"
assert_eq "$ac_version" "${deb_version%-*}" "debian/changelog's upstream version against configure.ac's AC_INIT"

[ "$(id -u)" -eq 0 ] || skip "needs root (dpkg -i)"
command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null ||
  skip "dpkg-buildpackage or dh not found: run scripts/install-deps (dpkg-dev, debhelper)"
git -C "$src" rev-parse --git-dir >/dev/null 2>&1 || skip "$src is not a git checkout; the packages are built from its git files"
[ -f "$ACME_BUILD_DIR/tests/fakes/libnvidia-ml.so.1" ] ||
  skip "no fake libnvidia-ml in $ACME_BUILD_DIR/tests/fakes: make check (or make tests/fakes/libnvidia-ml.so.1) first"
# One at a time on a machine: two harnesses on different ports (a check beside a loaded run, CI
# beside a compat run) would both reach here near their ends, and one's dpkg -i, purge and
# /usr-prefixed minicluster would pull the packages from under the other (it did: a run stopped
# by hand last session). The lock is held until this test exits (cleanup purges first); a second
# waits for the first's build and install, bounded below the timeout header's ceiling.
mkdir -p /run/lock && exec {machine_lock}>/run/lock/acme-packages-installed.lock ||
  fail "cannot open /run/lock/acme-packages-installed.lock"
if ! flock -n "$machine_lock"; then
  echo "waiting for another t-packages-installed on this machine (/run/lock/acme-packages-installed.lock)" >&2
  flock -w 2400 "$machine_lock" ||
    fail "another t-packages-installed held /run/lock/acme-packages-installed.lock for 40 minutes"
fi
# Released by hand, after cleanup (on_exit runs in reverse): the daemons and the build started
# below inherit the descriptor, and a flock lives as long as any copy of it is open.
on_exit "flock -u $machine_lock"
# Leave the machine as found: packages someone installed (or their left conffiles) are theirs.
for p in "${packages[@]}"; do
  state=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)
  [ -z "$state" ] || [ "$state" = not-installed ] ||
    skip "$p is $state on this machine; not replacing it (dpkg --purge ${packages[*]} to run this test)"
done

arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null)
[ -n "$multiarch" ] || fail "dpkg-architecture -qDEB_HOST_MULTIARCH said nothing"
plugindir=/usr/lib/$multiarch/slurm

# The second minicluster: its own state (lib.sh: under /tmp) and ports, beside the harness's
# (which stays up).
second_minicluster_dir
# Clear of the outer cluster (its slurmd +1..+99, slurmdbd +100, MariaDB +101) and of the
# demo's (+200..+301).
mc_port=$((${ACME_MINICLUSTER_PORT:-16817} + 400))
# One name per port, not mktemp's: the compile commands carry it (-ffile-prefix-map), and ccache
# finds the last run's objects only under the same commands.
work=/tmp/acme-deb-$mc_port
rm -rf "$work" && mkdir -p "$work" || fail "cannot make $work"
installed=0
copied_db=""
cleanup() {
  second_minicluster_down "$mc" "$mc_port"
  # gpuacct leaves SQLite's -wal and -shm beside the copy; dpkg keeps a non-empty spool.
  [ -n "$copied_db" ] && rm -f "$copied_db" "$copied_db-wal" "$copied_db-shm"
  if [ "$installed" -eq 1 ]; then
    dpkg --purge "${packages[@]}" >"$ACME_TEST_TMP/dpkg-purge.log" 2>&1 ||
      echo "cleanup: dpkg --purge ${packages[*]} failed; see $ACME_TEST_TMP/dpkg-purge.log" >&2
  fi
  rm -rf "$work"
}
on_exit cleanup
# The harness's timeout sends SIGTERM: exit through the EXIT trap.
trap 'exit 1' TERM INT

# --- build: the tree's committed and working files (not its build outputs, not .git) ---------
tree=$work/acme-slurm-$ac_version
mkdir -p "$tree"
(cd "$src" && git ls-files -z -co --exclude-standard |
  while IFS= read -r -d '' f; do [ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"; done |
  tar --null -T - -cf -) | tar -C "$tree" -xf - || fail "cannot copy the tree's files into $tree"
[ -x "$tree/debian/rules" ] || fail "debian/rules missing or not executable in the copy"

build_log=$ACME_TEST_TMP/dpkg-buildpackage.log
echo "building the packages in $tree (log: $build_log)"
# nocheck: the unit tests are make check's (scripts/check runs them); this test is about the
# packages. -j2: the CI machine has two cores. dh calls the compiler by its triplet name
# (x86_64-linux-gnu-g++), which Debian's ccache links under /usr/lib/ccache as well.
# debhelper (compat 13) gives the build a HOME of its own, so ccache is told its cache directory.
build_env=()
if [ -d /usr/lib/ccache ] && command -v ccache >/dev/null; then
  build_env=(PATH="/usr/lib/ccache:$PATH" CCACHE_DIR="$(ccache --get-config cache_dir)")
fi
# Its own process group, so that a silent build is stopped whole (make, the compilers).
(cd "$tree" && exec setsid env "${build_env[@]}" DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b -j2) >"$build_log" 2>&1 &
builder=$!
on_exit 'kill -- -'"$builder"' 2>/dev/null'
size=-1 silent=0
while kill -0 "$builder" 2>/dev/null; do
  now=$(stat -c %s "$build_log" 2>/dev/null || echo 0)
  if [ "$now" = "$size" ]; then silent=$((silent + 5)); else size=$now silent=0; fi
  if ((silent >= 600)); then
    kill -- -"$builder" 2>/dev/null
    tail -n 30 "$build_log" >&2
    fail "dpkg-buildpackage printed nothing for 10 minutes in $tree; stopped"
  fi
  sleep 5
done
if ! wait "$builder"; then
  tail -n 30 "$build_log" >&2
  fail "dpkg-buildpackage -us -uc -b failed in $tree"
fi

deb() { echo "$work/${1}_${deb_version}_${arch}.deb"; }
built=$(cd "$work" && ls -- *.deb 2>/dev/null | grep -v -- '-dbgsym_' | sort | paste -sd' ')
expected=$(for p in "${packages[@]}"; do basename "$(deb "$p")"; done | sort | paste -sd' ')
assert_eq "$expected" "$built" "the .debs built (besides -dbgsym)"
for p in "${packages[@]}"; do
  echo "--- $p"
  dpkg-deb -c "$(deb "$p")" | awk '{ print $1, $2, $6 }'
done

# The package's files, with /-rooted names (dpkg-deb -c says ./usr/...; directories end in /).
files_of() { dpkg-deb -c "$(deb "$1")" | awk '{ print $6 }' | sed 's|^\./|/|; s|/$||'; }
assert_ships() { # package path...
  local p=$1 list f
  shift
  list=$(files_of "$p")
  for f; do grep -qxF "$f" <<<"$list" || fail "$p does not ship $f"; done
}

rules=()
for r in "$src"/rules/*.toml; do rules+=("/etc/slurm/acme/rules.d/$(basename "$r")"); done
assert_ships acme-slurm-plugins "$plugindir/gputrace.so" "$plugindir/faultguard.so" \
  "$plugindir/gputrace_impl.so" "$plugindir/faultguard_impl.so" \
  /usr/libexec/acme-slurm/acme-gpu-sampler /usr/libexec/acme-slurm/acme-gpu-sampler-start /usr/libexec/acme-slurm/acme-faultguard-epilog \
  /usr/libexec/acme-slurm/acme-ckpt-find /usr/libexec/acme-slurm/acme-health-gate \
  /usr/libexec/acme-slurm/evalsched-stage.sh \
  /etc/slurm/plugstack.conf.d/acme.conf /etc/slurm/acme/checkpoints.toml "${rules[@]}" \
  /usr/share/man/man8/gputrace.8.gz /usr/share/man/man8/faultguard.8.gz /usr/share/man/man5/acme-record.5.gz /var/spool/acme \
  /usr/share/acme-slurm/grafana/acme-slurm-job-gpus.json /usr/share/acme-slurm/grafana/acme-slurm-cluster-gpus.json \
  /usr/share/acme-slurm/prometheus/acme-slurm-rules.yml
assert_ships acme-slurm-tools /usr/bin/gpuacct /usr/bin/faultdiag /usr/bin/evalsched /usr/bin/evalsched-sim \
  /usr/share/man/man1/gpuacct.1.gz /usr/share/man/man1/faultdiag.1.gz /usr/share/man/man1/evalsched.1.gz \
  /usr/share/man/man1/evalsched-sim.1.gz /usr/share/man/man5/evalsched-suite.5.gz
assert_ships acme-evalschedd /usr/sbin/evalschedd /etc/slurm/acme/evalsched.conf \
  /usr/share/man/man8/evalschedd.8.gz /usr/share/man/man5/evalsched.conf.5.gz
grep -qxE '(/usr)?/lib/systemd/system/evalschedd\.service' <<<"$(files_of acme-evalschedd)" ||
  fail "acme-evalschedd ships no evalschedd.service under /lib/systemd/system"
spool_entry=$(dpkg-deb -c "$(deb acme-slurm-plugins)" | awk '$6 == "./var/spool/acme/" { print $1, $2 }')
assert_eq "drwx------ root/root" "$spool_entry" "the spool directory in acme-slurm-plugins"
for p in "${packages[@]}"; do
  # Slurm loads the .so; a libtool .la or the test double NVML has no business in a package.
  leaked=$(files_of "$p" | grep -E '\.la$|libnvidia-ml' || true)
  [ -z "$leaked" ] || fail "$p ships $leaked"
done

# Conffiles: everything under /etc (debhelper compat 13 marks them).
conffiles_of() { # package
  mkdir -p "$work/control/$1"
  dpkg-deb -e "$(deb "$1")" "$work/control/$1" || fail "dpkg-deb -e $1 failed"
  cat "$work/control/$1/conffiles" 2>/dev/null
}
plugin_conffiles=$(conffiles_of acme-slurm-plugins)
for f in /etc/slurm/plugstack.conf.d/acme.conf /etc/slurm/acme/checkpoints.toml "${rules[@]}"; do
  grep -qxF "$f" <<<"$plugin_conffiles" || fail "acme-slurm-plugins: $f is not a conffile (conffiles: $plugin_conffiles)"
done
grep -qxF /etc/slurm/acme/evalsched.conf <<<"$(conffiles_of acme-evalschedd)" ||
  fail "acme-evalschedd: /etc/slurm/acme/evalsched.conf is not a conffile"

# The plugins depend on the Slurm release they were built against, which is the one here.
slurm_release=$(dpkg-query -W -f='${Version}' slurm-wlm-basic-plugins | sed -E 's/^([0-9]+\.[0-9]+).*/\1/')
depends=$(dpkg-deb -f "$(deb acme-slurm-plugins)" Depends)
assert_contains "$depends" "slurm-wlm-basic-plugins (>= $slurm_release)" "acme-slurm-plugins Depends"
assert_contains "$depends" "slurm-wlm-basic-plugins (<< " "acme-slurm-plugins Depends"
assert_contains "$depends" libslurm "acme-slurm-plugins Depends (the helpers link libslurm)"
assert_contains "$(dpkg-deb -f "$(deb acme-slurm-tools)" Depends)" libslurm "acme-slurm-tools Depends"

# --- install --------------------------------------------------------------------------------
installed=1
dpkg -i "$(deb acme-slurm-plugins)" "$(deb acme-slurm-tools)" "$(deb acme-evalschedd)" \
  >"$ACME_TEST_TMP/dpkg-i.log" 2>&1 || { tail -n 20 "$ACME_TEST_TMP/dpkg-i.log" >&2; fail "dpkg -i of the packages failed"; }
for p in "${packages[@]}"; do
  assert_eq installed "$(dpkg-query -W -f='${db:Status-Status}' "$p")" "dpkg status of $p"
done
assert_eq "700 root" "$(stat -c '%a %U' /var/spool/acme)" "mode and owner of the installed /var/spool/acme"
assert_eq "700 root" "$(stat -c '%a %U' /var/lib/acme)" "mode and owner of the installed /var/lib/acme"
unit=$(ls /lib/systemd/system/evalschedd.service /usr/lib/systemd/system/evalschedd.service 2>/dev/null | head -n 1)
assert_eq "/usr/sbin/evalschedd -D -f /etc/slurm/acme/evalsched.conf" "$(sed -n 's/^ExecStart=//p' "$unit")" "the installed unit's ExecStart"
# Not enabled on install (debian/rules): the daemon needs a site's configuration first.
[ ! -e /etc/systemd/system/multi-user.target.wants/evalschedd.service ] ||
  fail "installing acme-evalschedd enabled evalschedd.service"

# The installed snippet: both plugins, every path it names installed, and one spool for both.
snippet=/etc/slurm/plugstack.conf.d/acme.conf
grep -q "^optional $plugindir/gputrace.so " "$snippet" || fail "$snippet does not load $plugindir/gputrace.so: $(grep '^optional' "$snippet")"
grep -q "^optional $plugindir/faultguard.so " "$snippet" || fail "$snippet does not load $plugindir/faultguard.so"
for path in $(grep '^optional' "$snippet" | tr ' ' '\n' | sed -n 's|^\([a-z_]*=\)\{0,1\}\(/.*\)|\2|p'); do
  case $path in *.db) path=$(dirname "$path") ;; esac   # created at first use, in a shipped directory
  [ -e "$path" ] || fail "$snippet names $path, which the packages did not install"
done
spools=$(grep '^optional' "$snippet" | tr ' ' '\n' | sed -n 's/^spool=//p' | sort -u)
[ "$(wc -l <<<"$spools")" -eq 1 ] && [ -n "$spools" ] || fail "$snippet: not one spool= for both plugins: $spools"
snippet_spool=$spools

# --- a second minicluster on the installed plugins and helpers ------------------------------
export ACME_MINICLUSTER_DIR=$mc ACME_MINICLUSTER_PORT=$mc_port
"$src/scripts/minicluster" up --prefix /usr --nodes 1 >"$ACME_TEST_TMP/minicluster-up.log" 2>&1 ||
  { cat "$ACME_TEST_TMP/minicluster-up.log" >&2; fail "minicluster up --prefix /usr (port $mc_port, $mc) failed"; }
export SLURM_CONF=$mc/etc/slurm.conf
plugstack=$mc/etc/plugstack.conf
grep -q "^optional $plugindir/gputrace.so .*sampler=/usr/libexec/acme-slurm/acme-gpu-sampler" "$plugstack" ||
  fail "the second minicluster does not load the installed gputrace.so and sampler: $(cat "$plugstack")"
grep -q "^optional $plugindir/faultguard.so .*rules=/etc/slurm/acme/rules.d .*helper=/usr/libexec/acme-slurm/acme-faultguard-epilog" "$plugstack" ||
  fail "the second minicluster does not load the installed faultguard.so, rules and helper: $(cat "$plugstack")"
# Slurm loads exactly what plugstack.conf names: no plugin or helper of the build tree.
for tree_dir in "$src" "$ACME_BUILD_DIR"; do
  if grep -E -e "$tree_dir/(spank|acme-|rules|etc)" "$plugstack" >/dev/null; then
    fail "the second minicluster's plugstack still names the build tree $tree_dir: $(cat "$plugstack")"
  fi
done

# Four fake GPUs at 55 % (the fake NVML reads its scenario next to itself, in the state dir).
scenario=""
for g in 0 1 2 3; do scenario+=$(printf '[[gpu]]\nminor = %d\nutil = 55\nmem_used = 5500\n' "$g")$'\n'; done
printf '%s' "$scenario" >"$mc/nvml/scenarios/default.toml"

# --gpu-telemetry exists only through the installed gputrace.so that sbatch loads.
id=$(submit --gpu-telemetry=1 --gres=gpu:1 -o "$ACME_TEST_TMP/job.out" --wrap 'echo gpus=$SLURM_JOB_GPUS; sleep 4')
assert_eq COMPLETED "$(wait_job "$id" 90)" "job $id state"
assert_no_sampler "$id"
samples=$(spool_query n1 "SELECT COUNT(*) FROM gpu_samples WHERE job_id = $id")
[ "${samples:-0}" -ge 2 ] || fail "only ${samples:-0} samples of job $id in $(spool_db n1) from the installed sampler"
assert_eq "55.0" "$(spool_query n1 "SELECT DISTINCT util_gpu FROM gpu_samples WHERE job_id = $id")" "sampled utilisation"
assert_eq 1 "$(spool_query n1 "SELECT COUNT(*) FROM gpu_summaries WHERE job_id = $id")" "summary rows of job $id"
grep -q "gputrace: job $id: sampling GPUs" "$mc/log/slurmd-n1.log" ||
  fail "slurmd's log does not show the installed gputrace.so starting the sampler for job $id"

# The installed gpuacct on that spool shows the job.
line=$(/usr/bin/gpuacct --spool-dir "$(spool_dir)" -X -j "$id" -P -n -o JobID,State,AllocGPUS,Verdict 2>"$ACME_TEST_TMP/gpuacct.err")
assert_eq "$id|COMPLETED|1|ok" "$line" "/usr/bin/gpuacct --spool-dir $(spool_dir) -j $id"

# Where the snippet tells the plugins to write is where gpuacct reads spools without --spool-dir
# (--source spool: by default it reads slurmdbd): the job's spool copied into the snippet's
# spool (under a name of its own, removed at the end).
[ -d "$snippet_spool" ] || fail "the snippet's spool $snippet_spool does not exist after install"
copied_db=$snippet_spool/acme-pkgtest-$$.db
sqlite3 "$(spool_db n1)" ".backup '$copied_db'" || fail "cannot copy the spool into $copied_db"
line=$(env -u ACME_SPOOL_DIR /usr/bin/gpuacct --source spool -X -j "$id" -P -n -o JobID,State 2>"$ACME_TEST_TMP/gpuacct-default.err")
assert_eq "$id|COMPLETED" "$line" "installed gpuacct without --spool-dir (snippet's spool=$snippet_spool): $(cat "$ACME_TEST_TMP/gpuacct-default.err")"
echo "job $id: $samples samples by /usr/libexec/acme-slurm/acme-gpu-sampler, shown by /usr/bin/gpuacct"
