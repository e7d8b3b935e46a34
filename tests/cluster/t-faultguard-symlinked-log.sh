#!/usr/bin/env bash
# The epilog runs as root but reads the job's log as the job's user: a job whose --output ends
# up a symlink to a root-only file gets nothing of that file into its diagnosis.
. "$(dirname "$0")/lib.sh"

user=$(test_user)
dir=$ACME_TEST_TMP/userdir
mkdir -p "$dir"
chown "$user" "$dir"
secret=$ACME_TEST_TMP/root-only-secret
echo "RuntimeError: CUDA error: an illegal memory access was encountered (secret-7f3a)" >"$secret"
chmod 600 "$secret"
chown root:root "$secret"

id=$(cd "$dir" && submit --uid="$user" -o "$dir/out.log" --wrap \
  "echo plain output; rm -f $dir/out.log; ln -s $secret $dir/out.log; exit 1")
assert_eq FAILED "$(wait_job "$id")" "job state"
[ -L "$dir/out.log" ] || fail "the job did not leave its symlink"
node=$(job_nodes "$id")
row=$(spool_query "$node" "SELECT reason || ' ' || evidence FROM diagnoses WHERE job_id = $id")
[ -n "$row" ] || fail "no diagnosis stored for job $id"
case $row in
  *secret-7f3a* | *cuda_error*) fail "the root-only file leaked into the diagnosis: $row" ;;
esac
assert_contains "$row" "log not read" "the diagnosis says the log could not be read"
