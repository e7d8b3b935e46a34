#!/usr/bin/env bash
# After a traced job, the node spools (samples, diagnoses, log tails) are root's alone: the
# directory is 0700 and each database, with its -wal, is 0600. Another user cannot open them.
. "$(dirname "$0")/lib.sh"

id=$(submit -N1 --gres=gpu:1 --gpu-telemetry=1 -o "$ACME_TEST_TMP/job.out" --wrap 'sleep 2; echo "secret-token-123" >&2; exit 1')
assert_eq FAILED "$(wait_job "$id" 60)" "job state"
node=$(job_nodes "$id")
assert_eq 700 "$(stat -c %a "$(spool_dir)")" "mode of the spool directory"
# The -wal and -shm files exist only while a connection is open; check whatever is there.
[ -e "$(spool_db "$node")" ] || fail "$(spool_db "$node") missing"
for f in "$(spool_dir)"/*.db "$(spool_dir)"/*.db-wal "$(spool_dir)"/*.db-shm; do
  [ -e "$f" ] || continue
  assert_eq 600 "$(stat -c %a "$f")" "mode of $f"
done
# The helpers' logs (diagnosis lines) are root's and its group's (0640), never others'.
for f in "$(spool_dir)"/*.log; do
  [ -e "$f" ] || continue
  [ $((0$(stat -c %a "$f") & 7)) -eq 0 ] || fail "$f is readable by others ($(stat -c %a "$f"))"
done
out=$(runuser -u nobody -- sqlite3 "file:$(spool_db "$node")?immutable=1" 'SELECT text FROM log_tails' 2>&1)
case $out in
  *secret-token-123*) fail "user nobody read the job's log tail from the spool: $out" ;;
esac

# A user pointed at the spools gets one line saying what to do and a non-zero exit, never an
# empty table; the same when the directory is open but the files are not.
for d in "$(spool_dir)" "$ACME_TEST_TMP/open-dir"; do
  if [ "$d" != "$(spool_dir)" ]; then
    mkdir -p "$d" && chmod 755 "$d" && cp "$(spool_db "$node")" "$d/" && chmod 600 "$d"/*.db
  fi
  out=$(runuser -u nobody -- "$ACME_BUILD_DIR/acct/gpuacct/gpuacct" --spool-dir "$d" 2>"$ACME_TEST_TMP/err")
  status=$?
  assert_eq 1 "$status" "exit status of gpuacct --spool-dir $d as nobody"
  assert_eq "" "$out" "stdout of gpuacct --spool-dir $d as nobody"
  assert_contains "$(tail -n 1 "$ACME_TEST_TMP/err")" "readable by root only: leave out --spool-dir to read Slurm's accounting" \
    "gpuacct's error as nobody for $d"
done

# Someone the admins gave the files to (a group, 0750 directory and 0640 files) reads a WAL
# spool nobody has open, without write access anywhere: read-only access works.
getent group acmeadm >/dev/null || groupadd acmeadm || skip "cannot create the group acmeadm"
user=$(test_user)
grep -qw acmeadm <<<"$(id -nG "$user")" || usermod -aG acmeadm "$user"
view=$ACME_TEST_TMP/admin-view
mkdir -p "$view"
sqlite3 "$(spool_db "$node")" ".backup '$view/$node.db'"
sqlite3 "$view/$node.db" 'PRAGMA journal_mode=WAL' >/dev/null
chgrp -R acmeadm "$view" && chmod 750 "$view" && chmod 640 "$view/$node.db"
[ ! -e "$view/$node.db-wal" ] || fail "the copy left a -wal behind"
got=$(runuser -u "$user" -- "$ACME_BUILD_DIR/acct/gpuacct/gpuacct" --spool-dir "$view" -a -X -j "$id" -n -P -o JobID,State 2>&1)
assert_eq "$id|FAILED" "$got" "gpuacct as $user (group acmeadm) over a closed WAL spool"
