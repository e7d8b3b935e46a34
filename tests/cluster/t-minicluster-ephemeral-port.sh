#!/usr/bin/env bash
# `minicluster up` refuses ports in the kernel's ephemeral range with one line that says what to
# set, and leaves nothing behind: there, any outgoing connection (a slurmd's to slurmctld,
# slurmdbd's to MariaDB) may be given a node's port while the cluster starts, and a 256-node
# cluster at 40817 lost a slurmd to "Address already in use" and never came up.
. "$(dirname "$0")/lib.sh"

read -r lo hi </proc/sys/net/ipv4/ip_local_port_range || skip "no /proc/sys/net/ipv4/ip_local_port_range"
((hi - lo > 300)) || skip "the ephemeral range $lo-$hi is too narrow to place a cluster in it"
# A short path (Slurm's sockets live under it): a name nothing has, not made.
mc=$(mktemp -u /tmp/acme-mc-eph.XXXXXX)
out=$(ACME_MINICLUSTER_DIR=$mc ACME_MINICLUSTER_PORT=$((lo + 100)) "$ACME_SRC_DIR/scripts/minicluster" up --nodes 2 \
  --no-accounting --no-prometheus 2>&1)
rc=$?
if [ "$rc" -eq 0 ]; then
  ACME_MINICLUSTER_DIR=$mc ACME_MINICLUSTER_PORT=$((lo + 100)) "$ACME_SRC_DIR/scripts/minicluster" down >/dev/null 2>&1
  fail "minicluster up at port $((lo + 100)), inside the ephemeral range $lo-$hi, came up"
fi
assert_contains "$out" "port $((lo + 100)) is in the kernel's ephemeral range ($lo-$hi" "up's refusal"
assert_contains "$out" "set ACME_MINICLUSTER_PORT so that every port stays below $lo" "what up says to do"
assert_eq 1 "$(grep -c . <<<"$out")" "lines up printed"
# It names the ports of what this cluster would run, and only those (--no-accounting --no-prometheus).
assert_contains "$out" "slurmctld uses $((lo + 100))" "the ports up lists"
case $out in *node_exporter* | *slurmdbd* | *MariaDB*) fail "up's refusal lists services the cluster does not run: $out" ;; esac
[ -e "$mc" ] && fail "up left $mc behind after refusing the port"
echo "ok"
