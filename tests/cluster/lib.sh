# Sourced by every cluster test. The harness (tests/cluster/run) has brought the minicluster
# up and exported SLURM_CONF, ACME_BUILD_DIR and ACME_TEST_TMP (a scratch dir for this test).
# A test exits 0 to pass, 77 to skip (saying why on stdout), anything else to fail.

set -uo pipefail
# So `grep -q` (and -m) read a here-string (`grep -q PAT <<<"$text"`), never a pipe: grep -q exits
# at its first match, and a writer still writing then dies of SIGPIPE, which pipefail makes the
# pipeline's status (on a loaded machine t-evalsched-watch's "|| fail" fired on a status that
# matched, and a "&& fail" can pass when it should fail).

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

skip() {
  echo "SKIP: $*"
  exit 77
}

# Clean-up at exit, added to (never replaced): each helper and the test register what they
# changed, and all of it is undone, newest first. A plain `trap ... EXIT` would drop what an
# earlier helper registered (a plugstack change outliving its test and failing later ones).
_on_exit_cmds=()
on_exit() { # command
  _on_exit_cmds+=("$1")
  trap _run_on_exit EXIT
}
_run_on_exit() {
  local i
  for ((i = ${#_on_exit_cmds[@]} - 1; i >= 0; i--)); do eval "${_on_exit_cmds[i]}"; done
}

assert_eq() { # expected actual what
  [ "$1" = "$2" ] || fail "$3: expected '$1', got '$2'"
}

assert_contains() { # haystack needle what
  case $1 in
    *"$2"*) ;;
    *) fail "$3: '$2' not found in: $1" ;;
  esac
}

# Submits with sbatch --parsable and prints the job id; fails the test if sbatch refuses.
submit() {
  local out
  out=$(sbatch --parsable "$@" 2>&1) || fail "sbatch $* refused: $out"
  echo "${out%%;*}"
}

# The least a wait on slurmctld's or a node's state allows (seconds), whatever its caller asks:
# the waits end on the state, so a ceiling only decides how soon a test that hangs fails, and a
# loaded machine (load 30-80 on 2 cores in the loaded runs) takes minutes where a quiet one takes
# seconds.
wait_floor() { # asked_s
  local floor=${ACME_WAIT_FLOOR:-120}
  echo $(($1 > floor ? $1 : floor))
}

# Waits until the job leaves PENDING/RUNNING/COMPLETING and prints its final state.
wait_job() { # jobid [timeout_s]
  local id=$1 limit state
  limit=$(wait_floor "${2:-60}")
  local deadline=$((SECONDS + limit))
  while ((SECONDS < deadline)); do
    state=$(scontrol show job "$id" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
    case $state in
      PENDING | RUNNING | COMPLETING | CONFIGURING | SUSPENDED | REQUEUED | "") sleep 0.3 ;;
      *)
        # COMPLETING ends when every epilog has run; wait for the node side to be done too:
        # faultguard writes a cleanly ended job's rows and record from a detached helper after
        # its epilog (faultguard(8), "The epilog"), as a user reading them a moment later sees.
        wait_detached_epilog "$id"
        echo "$state"
        return 0
        ;;
    esac
  done
  scontrol show job "$id" >&2
  fail "job $id did not finish within $limit s"
}

# Waits until slurmctld shows the job in STATE; fails after SECONDS (wait_floor at least),
# naming WHAT and the state.
wait_job_state() { # jobid state seconds what
  local limit
  limit=$(wait_floor "$3")
  local deadline=$((SECONDS + limit))
  until [ "$(job_field "$1" JobState)" = "$2" ]; do
    ((SECONDS < deadline)) || fail "$4 not ${2,,} in $limit s: $(job_field "$1" JobState)"
    sleep 0.3
  done
}
# Until no acme-faultguard-epilog of this job runs. The helper ends itself after faultguard's
# timeout (20 s on the minicluster), but a loaded node can take longer to run and reap it: at most
# wait_floor's seconds, then a line (the caller's assertion says what was missed).
wait_detached_epilog() { # jobid
  local limit
  limit=$(wait_floor 30)
  local deadline=$((SECONDS + limit))
  while pgrep -f "acme-faultguard-epilog --job $1 .*--spool $(spool_dir) " >/dev/null; do
    ((SECONDS < deadline)) || { echo "wait_detached_epilog: job $1's acme-faultguard-epilog still runs after $limit s" >&2; return 0; }
    sleep 0.1
  done
}

job_field() { # jobid field
  scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}

# --- telemetry helpers -----------------------------------------------------------------------
spool_dir() { echo "$ACME_MINICLUSTER_DIR/spool"; }
spool_db() { echo "$ACME_MINICLUSTER_DIR/spool/$1.db"; }
spool_query() { # node sql
  sqlite3 -batch -noheader "$(spool_db "$1")" "$2"
}

# Writes the fake NVML scenario every node reads (until the test ends).
use_scenario() { # toml text on stdin
  local d=$ACME_MINICLUSTER_DIR/nvml/scenarios
  mkdir -p "$d"
  cat >"$d/default.toml"
  on_exit 'rm -f "$ACME_MINICLUSTER_DIR/nvml/scenarios/default.toml"'
}

job_nodes() { scontrol show hostnames "$(job_field "$1" NodeList)"; }

# The shared minicluster's earlier tests drain nodes on purpose (t-recovery-stall-requeue drains
# n2, whose slurmd then answers late for a few seconds): a test that needs its job on given
# nodes starts from three idle, responding nodes (Slurm picks the lowest idle ones).
# At most wait_floor's seconds, then a line naming the states (the test goes on: its own
# assertions say what the busy node cost it).
all_nodes_idle() {
  scontrol update nodename=n[1-3] state=resume >/dev/null 2>&1
  local limit
  limit=$(wait_floor 30)
  local deadline=$((SECONDS + limit))
  # %T says idle* for a node not responding.
  until [ "$(sinfo -h -N -n n1,n2,n3 -o %T 2>/dev/null | grep -cx idle)" = 3 ]; do
    ((SECONDS < deadline)) || { echo "all_nodes_idle: n1-n3 not all idle after $limit s: $(sinfo -h -N -n n1,n2,n3 -o '%N %T' 2>&1 | paste -sd' ')" >&2; return 0; }
    sleep 0.5
  done
}

# A job that must still run when its sampler sees something (an XID of the scenario, an idle
# alert): the sampler starts at background priority once the job's first step runs (gputrace(8),
# start_wait), so on a loaded node a job that ends on a timer (`sleep 3; exit 1`) can end before
# its sampler has seen anything, and the diagnosis then lacks the evidence the test asserts.
# until_go FILE is the shell text for the job's script to wait until FILE exists (the test's
# go-ahead, given once it saw what it needs), at most 5 minutes.
until_go() { # file
  echo "i=0; until [ -e $1 ] || [ \$i -ge 1500 ]; do sleep 0.2; i=\$((i + 1)); done"
}
# Waits until NODE's spool holds COUNT (default 1) XID events of the job (its sampler saw the
# scenario's XIDs), at most wait_floor's seconds; fails naming the job, the node and its state.
wait_xid_seen() { # jobid node [count]
  local limit n
  limit=$(wait_floor 60)
  local deadline=$((SECONDS + limit))
  until n=$(spool_query "$2" "SELECT COUNT(*) FROM gpu_events WHERE job_id = $1 AND kind = 'xid'" 2>/dev/null) && [ "${n:-0}" -ge "${3:-1}" ]; do
    ((SECONDS < deadline)) || fail "${n:-no} of ${3:-1} XID events of job $1 in $2's spool within $limit s (job $(job_field "$1" JobState))"
    sleep 0.3
  done
}

# Fails if any acme-gpu-sampler of this job is still running (after the epilog, there must be none).
assert_no_sampler() { # jobid
  local left
  left=$(pgrep -f "acme-gpu-sampler --job $1 .*--spool $(spool_dir) " || true)
  [ -z "$left" ] || fail "sampler(s) of job $1 still running: $left"
}

# --- faultguard helpers ---------------------------------------------------------------------
# The stored answer (no --rules: with it faultdiag re-diagnoses).
faultdiag() { "$ACME_BUILD_DIR/acct/faultdiag/faultdiag" --spool-dir "$(spool_dir)" "$@"; }

# The diagnosis a node stored: "category|reason|action".
stored_diagnosis() { # node jobid
  spool_query "$1" "SELECT category || '|' || reason || '|' || action FROM diagnoses WHERE job_id = $2"
}

# A non-root user for tests that need one (jobs run as that user; root reads nothing for it).
test_user() {
  local u=acmetest
  id -u "$u" >/dev/null 2>&1 || useradd --system --no-create-home --shell /bin/bash "$u" >/dev/null 2>&1 ||
    skip "cannot create the test user $u"
  echo "$u"
}

# The common scenario: every fake GPU of the node busy at UTIL percent, and optionally an XID
# of CODE on every one of them AT seconds after the sampler starts (only the job's own GPUs
# are watched, so the job sees exactly its GPUs' XIDs).
use_uniform_scenario() { # util [xid_code [at]]
  local gpus g text=""
  gpus=$(cat "$ACME_MINICLUSTER_DIR/gpus" 2>/dev/null || echo 4)
  for ((g = 0; g < gpus; g++)); do text+=$(printf '[[gpu]]\nminor = %d\nutil = %s\n' "$g" "$1")$'\n'; done
  if [ -n "${2:-}" ]; then
    for ((g = 0; g < gpus; g++)); do text+=$(printf '[[xid]]\nat = %s\nminor = %d\ncode = %s\n' "${3:-1.0}" "$g" "$2")$'\n'; done
  fi
  # Not through a pipe: use_scenario's clean-up must be registered in the test's own shell.
  use_scenario <<<"$text"
}

# --- stall detection (gputrace(8) STALL DETECTION) ---------------------------------------------
# Scales the stall windows down to seconds for this test's jobs: Slurm re-reads plugstack.conf at
# each job launch. The caller restores it with restore_plugstack (through on_exit).
small_stall_windows() { # extra key=value words...
  local conf=$ACME_MINICLUSTER_DIR/etc/plugstack.conf
  cp "$conf" "$ACME_TEST_TMP/plugstack.conf.orig"
  sed -i "/gputrace.so/ s|\$| stall_warmup=2 stall_probe=0.5 stall_grace=2 stall_margin=3 $*|" "$conf"
}
# Adds key=value words to gputrace's plugstack line for this test's jobs (Slurm re-reads
# plugstack.conf at each job launch); restored with restore_plugstack, as small_stall_windows.
gputrace_keys() { # key=value words...
  local conf=$ACME_MINICLUSTER_DIR/etc/plugstack.conf
  [ -f "$ACME_TEST_TMP/plugstack.conf.orig" ] || cp "$conf" "$ACME_TEST_TMP/plugstack.conf.orig"
  cp "$ACME_TEST_TMP/plugstack.conf.orig" "$conf"
  sed -i "/gputrace.so/ s|\$| $*|" "$conf"
}
# The same for faultguard's plugstack line (faultguard.so; the impl it loads reads the keys).
faultguard_keys() { # key=value words...
  local conf=$ACME_MINICLUSTER_DIR/etc/plugstack.conf
  [ -f "$ACME_TEST_TMP/plugstack.conf.orig" ] || cp "$conf" "$ACME_TEST_TMP/plugstack.conf.orig"
  cp "$ACME_TEST_TMP/plugstack.conf.orig" "$conf"
  sed -i "/faultguard.so/ s|\$| $*|" "$conf"
}
# The node's record retrier, when one runs: its pid (from its lock file, the process alive and
# a retrier).
record_retrier_pid() { # node
  local pid
  pid=$(cat "$(spool_dir)/run/$1.retrier.pid" 2>/dev/null) || return 1
  [ -n "$pid" ] && grep -q -- "--retry-outbox .*--node $1 *$" <<<"$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" && echo "$pid"
}
# slurm.conf's MailProg at the test double of mail(1) (tests/fakes/mail-prog) for this test:
# slurmctld re-reads slurm.conf at scontrol reconfigure, and the sampler asks slurmctld for it
# when it mails. The mails sent are the lines of $ACME_TEST_TMP/mail/sent. Restored (and re-read)
# on the way out.
use_mail_prog() {
  local conf=${SLURM_CONF:-$ACME_MINICLUSTER_DIR/etc/slurm.conf}
  mkdir -p "$ACME_TEST_TMP/mail"
  cp "$ACME_SRC_DIR/tests/fakes/mail-prog" "$ACME_TEST_TMP/mail/mail"
  cp "$conf" "$ACME_TEST_TMP/slurm.conf.orig"
  on_exit 'cp "$ACME_TEST_TMP/slurm.conf.orig" "${SLURM_CONF:-$ACME_MINICLUSTER_DIR/etc/slurm.conf}" && scontrol reconfigure >/dev/null 2>&1'
  sed -i '/^MailProg=/d' "$conf"
  echo "MailProg=$ACME_TEST_TMP/mail/mail" >>"$conf"
  scontrol reconfigure || fail "scontrol reconfigure (MailProg) failed"
  assert_eq "$ACME_TEST_TMP/mail/mail" "$(scontrol show config | sed -n 's/^MailProg *= *//p')" "slurmctld's MailProg"
  scontrol update nodename=n[1-3] state=resume >/dev/null 2>&1
}
# A trainer's job script: one Python process steps once a second 15 times (a log line and a
# heartbeat touch each, as a trainer does), then runs PAUSE (Python statements), then AFTER more
# steps, then prints "done".
trainer_steps() { # pause_python after_steps
  echo "python3 -c \"import os, pathlib, sys, time
hb = pathlib.Path(os.environ['ACME_HEARTBEAT_FILE'])
def steps(n):
    for i in range(n):
        print('step', i, flush=True); hb.touch(); time.sleep(1)
steps(15); $1; steps($2); print('done', flush=True)\""
}
restore_plugstack() {
  [ -f "$ACME_TEST_TMP/plugstack.conf.orig" ] && cp "$ACME_TEST_TMP/plugstack.conf.orig" "$ACME_MINICLUSTER_DIR/etc/plugstack.conf"
}

# --- the acme record in slurmdbd (acme-record(5)) -------------------------------------------
# Every run's record of the job as one JSON line each, oldest run first ("null" for a run
# without one), decoded the way acme-record(5) shows an admin.
acme_records() { # jobid
  sacct -j "$1" -D -X -n -P -o AdminComment 2>/dev/null | python3 -c '
import base64, json, sys, zlib
for line in sys.stdin.read().splitlines():
    tokens = [t for t in line.split() if t.startswith("ACME1:")]
    print(json.dumps(json.loads(zlib.decompress(base64.b64decode(tokens[0][6:]))), sort_keys=True) if tokens else "null")'
}

# --- a record's parts on their way (faultguard(8), "The record") ---------------------------
# What the product promises for a node's part of a run's record is not a time (slurmdbd's speed
# decides that) but that the part is written or a line says why not: the tests wait on that.
# Whether NODE's part of JOB is being published now: the job's epilog on NODE runs (it writes the
# hand-off), or a publisher holds the hand-off (the epilog's own, a later epilog's, or a try of
# the node's record retrier).
record_part_publishing() { # jobid node
  pgrep -f "acme-faultguard-epilog --job $1 .*--node $2 .*--spool $(spool_dir) " >/dev/null ||
    pgrep -f -- "--publish $(spool_dir)/run/$2\.$1\.[0-9]+\.record( |\$)" >/dev/null
}
# Whether it is still on its way: being published, or kept in the node's outbox while the node's
# record retrier runs (rounds until record_retry= after the job's end; it ends when no part has a
# round left).
record_part_pending() { # jobid node
  record_part_publishing "$1" "$2" && return 0
  compgen -G "$(spool_dir)/run/$2.$1.*.record" >/dev/null &&
    pgrep -f -- "--retry-outbox --spool $(spool_dir) --node $2\$" >/dev/null
}

# The named nodes that have no part in the record of the job's first or newest run.
record_lacks() { # first|last jobid node...
  local which=$1 id=$2
  shift 2
  acme_records "$id" | python3 -c '
import json, sys
runs = [l for l in sys.stdin.read().splitlines() if l]
r = json.loads((runs[0] if sys.argv[1] == "first" else runs[-1]) if runs else "null")
print(" ".join(n for n in sys.argv[2:] if not (r and n in r["nodes"])))' "$which" "$@"
}

# Waits until the record of the job's first or newest run has a part from each named node, for as
# long as one of the parts it lacks is on its way (record_part_pending). Fails once none is:
# written nowhere, given up (the node's log says why), or left for the node's next epilog. Two
# looks in a row: a helper between its fork and its exec does not show its name yet.
wait_run_record_nodes() { # first|last jobid node...
  local which=$1 id=$2 missing n pending idle=0
  shift 2
  while :; do
    missing=$(record_lacks "$which" "$id" "$@")
    [ -z "$missing" ] && return 0
    pending=0
    for n in $missing; do record_part_pending "$id" "$n" && pending=1 && break; done
    if ((pending)); then idle=0; else idle=$((idle + 1)); fi
    ((idle >= 2)) &&
      fail "job $id: no part of $missing in its $which run's record, and none on its way (no epilog, publisher or record retrier of it left): $(grep -h "^job $id on " "$(spool_dir)"/*.faultguard.log 2>/dev/null | tail -n 6); records: $(acme_records "$id")"
    sleep 0.5
  done
}
# The same for the job's newest run.
wait_record_nodes() { # jobid node...
  wait_run_record_nodes last "$@"
}

# --- what slurmdbd has of the jobs ---------------------------------------------------------
# slurmctld's queue of messages for slurmdbd (sdiag's "DBD Agent queue size"): a job's end goes
# through it, and once it is empty slurmdbd has every message slurmctld sent.
slurmdbd_queue() { sdiag 2>/dev/null | sed -n 's/^DBD Agent queue size: *//p'; }
# Waits until COMMAND succeeds, for as long as slurmctld has messages queued for slurmdbd (a
# job's start and end among them), and then for as long as slurmdbd may still be writing the
# last of them: an empty queue means sent, not yet in MariaDB (a fresh-clone check at load 10
# saw a job's start still missing from sacct 0.6 s after slurmctld's queue emptied; at load 330
# one slurmdbd write took 79 s). Fails, saying WHAT, once the queue has stayed empty for
# ACME_SLURMDBD_SETTLE seconds (default 120) and COMMAND still fails: slurmdbd then has all it
# will get; or after ACME_SLURMDBD_WAIT seconds in all (default 240: a queue that never empties
# is a slurmdbd that does not take it). A wait, not a sleep: it returns as soon as COMMAND
# succeeds.
wait_slurmdbd_until() { # what command...
  local empty_since="" settle=${ACME_SLURMDBD_SETTLE:-120} deadline=$((SECONDS + ${ACME_SLURMDBD_WAIT:-240})) queue
  until "${@:2}"; do
    queue=$(slurmdbd_queue)
    if [ "$queue" = 0 ]; then
      : "${empty_since:=$SECONDS}"
      ((SECONDS - empty_since < settle)) ||
        fail "$1, and slurmctld has had no message left for slurmdbd for $settle s"
    else
      empty_since=""
    fi
    ((SECONDS < deadline)) || fail "$1 after ${ACME_SLURMDBD_WAIT:-240} s, and slurmctld still has ${queue:-an unknown number of} message(s) for slurmdbd"
    sleep 0.3
  done
}
# Whether slurmdbd shows each job ended: sacct's State no longer PENDING, RUNNING, SUSPENDED or
# REQUEUED (nor no row at all).
slurmdbd_shows_ended() { # jobid...
  local j
  for j in "$@"; do
    case $(sacct -X -n -P -j "$j" -o State 2>/dev/null | tail -n 1) in "" | PENDING | RUNNING | SUSPENDED | REQUEUED) return 1 ;; esac
  done
}
# Waits until each job has left slurmctld's queue (wait_job) and slurmdbd shows it ended.
wait_slurmdbd_ends() { # jobid...
  local j
  for j in "$@"; do wait_job "$j" 120 >/dev/null; done
  wait_slurmdbd_until "slurmdbd does not show job(s) $* ended" slurmdbd_shows_ended "$@"
}

# slurmdbd, for a test that freezes it (SIGSTOP, as when it is swamped): its pid in `dbd`,
# continued on the way out whatever the test did. Skips without accounting.
slurmdbd_to_freeze() {
  local pidfile=$ACME_MINICLUSTER_DIR/run/slurmdbd.pid
  [ -f "$pidfile" ] || skip "the minicluster runs without accounting"
  dbd=$(cat "$pidfile")
  kill -0 "$dbd" || fail "slurmdbd ($dbd) is not running"
  on_exit 'kill -CONT '"$dbd"' 2>/dev/null'
}

# --- the minicluster's Prometheus -------------------------------------------------------------
# Skips the test when the minicluster runs without Prometheus (up --no-prometheus).
need_prometheus() {
  [ "$(cat "$ACME_MINICLUSTER_DIR/prometheus" 2>/dev/null)" = yes ] || skip "the minicluster runs without Prometheus"
  [ -n "${ACME_PROMETHEUS_URL:-}" ] || fail "ACME_PROMETHEUS_URL is not set (scripts/minicluster env sets it)"
}

# An instant query through Prometheus' HTTP API, one line per series: the labels named (in that
# order, '|'-separated) and the value, e.g. `n1|0|70`. Fails on an API error.
prom_query() { # expr label...
  local expr=$1
  shift
  curl -fsS -m 10 "$ACME_PROMETHEUS_URL/api/v1/query" --data-urlencode "query=$expr" | python3 -c '
import json, sys
labels = sys.argv[1:]
r = json.load(sys.stdin)
if r.get("status") != "success":
    sys.exit("prometheus: " + r.get("error", "query failed"))
for s in sorted(r["data"]["result"], key=lambda s: [s["metric"].get(l, "") for l in labels]):
    v = float(s["value"][1])
    print("|".join([s["metric"].get(l, "") for l in labels] + [str(int(v)) if v.is_integer() else repr(v)]))' "$@" ||
    fail "Prometheus query failed: $expr"
}

# --- a second minicluster beside the harness's (another --prefix, a crash) -------------------
# Sets `mc` to a fresh state directory under /tmp, not under the scratch dir: a checkout's deep
# path would make its Unix socket paths too long (scripts/minicluster refuses past 72
# characters). Fails the test when none can be made: an empty ACME_MINICLUSTER_DIR would name
# the harness's own cluster.
second_minicluster_dir() {
  mc=$(mktemp -d /tmp/acme-mc.XXXXXX) && [ -n "$mc" ] || fail "cannot make a state directory under /tmp for a second minicluster"
}
# Its logs kept in the scratch dir (mc-logs), its daemons stopped, its directory removed.
second_minicluster_down() { # dir port
  [ -n "$1" ] && [ -d "$1" ] || return 0
  mkdir -p "$ACME_TEST_TMP/mc-logs"
  cp "$1"/log/*.log "$ACME_TEST_TMP/mc-logs/" 2>/dev/null
  if [ -f "$1/nodes" ] || [ -f "$1/etc/slurm.conf" ]; then
    ACME_MINICLUSTER_DIR=$1 ACME_MINICLUSTER_PORT=$2 "$ACME_SRC_DIR/scripts/minicluster" down >/dev/null 2>&1 ||
      echo "cleanup: minicluster down in $1 failed" >&2
  fi
  rm -rf "$1"
}

# For the tests of a requeued job's record parts (t-record-requeued-*): with accounting, no
# retrier (record_retry=0: parts wait in the outbox until a job's epilog on the node publishes
# them), and a job NAME that sleeps in its first run and, requeued, waits for the file $go.
# Sets pidfile (slurmdbd's), go and id; returns once the first run is RUNNING. On the way out
# (newest first): plugstack.conf as it was, then slurmdbd up again.
start_requeue_job() { # NAME
  pidfile=$ACME_MINICLUSTER_DIR/run/slurmdbd.pid
  [ -f "$pidfile" ] || skip "the minicluster runs without accounting"
  on_exit '"$ACME_SRC_DIR/scripts/minicluster" up >/dev/null'
  on_exit restore_plugstack
  faultguard_keys record_retry=0
  go=$ACME_TEST_TMP/go
  rm -f "$go"
  id=$(submit -J "$1" -N1 --gres=gpu:1 --gpu-telemetry=1 --requeue -o /dev/null --wrap \
    "if [ \"\${SLURM_RESTART_COUNT:-0}\" = 0 ]; then sleep 300; else until [ -e $go ]; do sleep 0.2; done; fi")
  wait_job_state "$id" RUNNING 60 "job $id"
}
