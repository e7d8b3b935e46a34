#!/usr/bin/env bash
# gpuacct on a running 2-node job, run as the job's user on a host whose node spools it cannot
# read: slurmdbd lists the job without GPU numbers (they reach it only at the job's end), and
# with the site's Prometheus (ACME_PROMETHEUS_URL or --prometheus) the numbers so far come from
# the samplers' series. A Prometheus that does not answer costs a warning line, never the
# listing or the exit status; a URL that does not parse is a usage error.
. "$(dirname "$0")/lib.sh"
need_prometheus

G=$ACME_BUILD_DIR/acct/gpuacct/gpuacct
unset ACME_SPOOL_DIR
u=$(test_user)
# As the user, with the harness's slurm.conf and only the Prometheus URL given (if any).
as_user() { # url command-args...
  local url=$1
  shift
  runuser -u "$u" -- env -u ACME_SPOOL_DIR -u ACME_PROMETHEUS_URL SLURM_CONF="$SLURM_CONF" \
    ${url:+ACME_PROMETHEUS_URL=$url} "$G" "$@"
}
# A port nothing listens on: one the kernel just handed out and was given back.
closed_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

use_uniform_scenario 70
d=$ACME_TEST_TMP/job
mkdir -p "$d"
chmod 777 "$d"
id=$(submit --uid="$u" -J prom-running -N2 --gres=gpu:2 --gpu-telemetry=1 -o "$d/job.out" --wrap 'srun -N2 sleep 600')
# (It runs until the test cancels it: what is asserted while it runs cannot outlast it.)
wait_job_state "$id" RUNNING 120 "job $id"

# The user cannot read the spools: whatever gpuacct shows of the GPUs comes from elsewhere.
runuser -u "$u" -- test -r "$(spool_dir)" -a -x "$(spool_dir)" && fail "$u can read $(spool_dir): the test proves nothing"

# Wait until Prometheus has scraped each of the 4 GPUs a few times.
n=0
deadline=$((SECONDS + 120))
while ((SECONDS < deadline)); do
  n=$(prom_query "count(count_over_time(acme_job_gpu_info{hpc_job=\"$id\"}[5m]) >= 3)" | cut -d'|' -f1)
  [ "${n:-0}" = 4 ] && break
  sleep 0.5
done
assert_eq 4 "${n:-0}" "GPUs of job $id scraped 3 times or more"

# slurmdbd hears of the start from slurmctld's agent, seconds later on a loaded machine: until
# then sacct (and gpuacct without the spools) lists the job PENDING, as it would for any user.
sacct_running() { [ "$(sacct -j "$id" -X -n -P -o State 2>/dev/null | head -n 1)" = RUNNING ]; }
wait_slurmdbd_until "sacct -j $id does not show the job RUNNING" sacct_running

fields=JobID,State,AllocGPUS,GPUUtil,Verdict
# Without Prometheus: listed, no numbers (nothing else has them for this user).
assert_eq "$id|RUNNING|4||" "$(as_user "" -X -j "$id" -P -n --format=$fields 2>&1)" "gpuacct -j $id as $u, no Prometheus"

# With ACME_PROMETHEUS_URL: the numbers so far, judged by the spool's rule.
err=$ACME_TEST_TMP/prom.err
got=$(as_user "$ACME_PROMETHEUS_URL" -X -j "$id" -P -n --format=$fields 2>"$err")
assert_eq 0 "$?" "exit of gpuacct with ACME_PROMETHEUS_URL"
assert_eq "$id|RUNNING|4|70.0|ok" "$got" "gpuacct -j $id as $u with ACME_PROMETHEUS_URL"
assert_eq "" "$(cat "$err")" "stderr of gpuacct with ACME_PROMETHEUS_URL"
# Every GPU of both nodes is in it, with samples and memory; and the default listing, without -j,
# shows the same job.
python3 - "$id" <<PY || fail "gpuacct --json as $u: $(as_user "$ACME_PROMETHEUS_URL" -X -j "$id" --json 2>&1)"
import json, subprocess, sys
out = subprocess.run(["runuser", "-u", "$u", "--", "env", "SLURM_CONF=$SLURM_CONF", "ACME_PROMETHEUS_URL=$ACME_PROMETHEUS_URL",
                      "$G", "-X", "-j", sys.argv[1], "--json"], capture_output=True, text=True, check=True).stdout
row = json.loads(out)["rows"][0]
assert row["State"] == "RUNNING", row
assert row["Samples"] and row["Samples"] >= 12, row
assert row["GPUMemTotal"] and row["GPUMemTotal"] > 0, row
assert row["GPUUtilMax"] == 70, row
PY
assert_contains "$(as_user "$ACME_PROMETHEUS_URL" -X -S now-1hours -P -n --format=$fields 2>&1)" "$id|RUNNING|4|70.0|ok" \
  "gpuacct -S now-1hours as $u"

# The flag wins over the environment.
port=$(closed_port)
assert_eq "$id|RUNNING|4|70.0|ok" \
  "$(as_user "http://127.0.0.1:$port" --prometheus "$ACME_PROMETHEUS_URL" -X -j "$id" -P -n --format=$fields 2>&1)" \
  "--prometheus over ACME_PROMETHEUS_URL"

# Nothing listens at the URL: one warning naming it, the listing without numbers, exit 0.
got=$(as_user "http://127.0.0.1:$port" -X -j "$id" -P -n --format=$fields 2>"$err")
assert_eq 0 "$?" "exit of gpuacct with an unreachable Prometheus"
assert_eq "$id|RUNNING|4||" "$got" "gpuacct -j $id with an unreachable Prometheus"
assert_eq "gpuacct: warning: Prometheus at http://127.0.0.1:$port: connection refused; running jobs are listed without their GPU numbers" \
  "$(cat "$err")" "the warning"

# Something answers HTTP, but not Prometheus' API (n1's node_exporter, at slurmctld's port + 111
# in the minicluster, answers any path with its HTML landing page before 1.6, Debian 12's 1.5,
# and with 404 from 1.6, Debian unstable's): a warning that says so.
ne=$(($(scontrol show config | sed -n 's/^SlurmctldPort *= *//p') + 111))
curl -fsS -m 5 "http://127.0.0.1:$ne/metrics" >/dev/null || fail "no node_exporter at port $ne"
got=$(as_user "" --prometheus "http://127.0.0.1:$ne" -X -j "$id" -P -n --format=$fields 2>"$err")
assert_eq 0 "$?" "exit of gpuacct with node_exporter as Prometheus"
assert_eq "$id|RUNNING|4||" "$got" "gpuacct -j $id with node_exporter as Prometheus"
warning=$(cat "$err")
case $warning in
  "gpuacct: warning: Prometheus at http://127.0.0.1:$ne: not JSON (is this Prometheus' URL?); running jobs are listed without their GPU numbers") ;;
  "gpuacct: warning: Prometheus at http://127.0.0.1:$ne: HTTP 404 (is this Prometheus' URL?); running jobs are listed without their GPU numbers") ;;
  *) fail "the warning with node_exporter as Prometheus: $warning" ;;
esac

# A URL that does not parse: one line, exit 1, nothing listed.
out=$(as_user "" --prometheus foo -X -j "$id" -P -n 2>"$err")
status=$?
[ "$status" -ne 0 ] || fail "gpuacct --prometheus foo exited 0"
assert_eq "" "$out" "stdout of gpuacct --prometheus foo"
assert_eq 1 "$(wc -l <"$err")" "stderr lines of gpuacct --prometheus foo"
assert_contains "$(cat "$err")" "--prometheus \"foo\"" "the error of gpuacct --prometheus foo"

scancel "$id"
wait_job "$id" 60 >/dev/null
