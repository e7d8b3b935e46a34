# shellcheck shell=bash disable=SC2154,SC2034 # sourced: the globals are the bench's
# evalsched-stage-shared.sh: evalschedd's stage_helper for tests/bench/evalsched-cluster. The
# minicluster's "shared storage" is a local directory, where a copy costs next to nothing; a
# real cluster's copy crosses the node's NIC and the storage's aggregate bandwidth, shared with
# every other read in flight (the paper's Fig. 16). This sources the real helper and wraps
# evalsched_stage: after a copy from the shared directory (copied: 1), it also spends the read
# that scripts/fake-eval's shared-storage model (the simulator's Storage) gives those bytes,
# and records it in the stage's seconds, so the daemon's staging priors learn it. A stage job
# copies before any trial on its node starts (afterok); a trial that stages itself lets its
# node's other trials read the copy during the modelled read (noted in the bench's header).
#
# Set by the bench before sourcing: EVALSCHED_BENCH_REAL_STAGE_HELPER (the daemon's helper),
# EVALSCHED_BENCH_FAKE_EVAL, EVALSCHED_BENCH_SHARED_DIR, EVALSCHED_BENCH_SHARED_BPS,
# EVALSCHED_BENCH_NIC_BPS (the bench writes them into a small file that sources this one).
# shellcheck source=/dev/null
. "$EVALSCHED_BENCH_REAL_STAGE_HELPER" || return 1
eval "_evalsched_stage_copy_$(declare -f evalsched_stage)"

evalsched_stage() {
  local record=$4 read_s
  _evalsched_stage_copy_evalsched_stage "$@" || return
  grep -q '"copied": 1' "$record" 2>/dev/null || return 0
  read_s=$("$EVALSCHED_BENCH_FAKE_EVAL" --checkpoint "$1" --shared-read --shared-dir "$EVALSCHED_BENCH_SHARED_DIR" \
    --shared-bandwidth "$EVALSCHED_BENCH_SHARED_BPS" --nic-bandwidth "$EVALSCHED_BENCH_NIC_BPS") || return 1
  # The record's seconds: the local copy plus the modelled read.
  sed -i "s/\"seconds\": \([0-9.]*\)}/\"seconds\": $(awk -v a="$(sed -n 's/.*"seconds": \([0-9.]*\).*/\1/p' "$record")" -v b="$read_s" 'BEGIN { printf "%.3f", a + b }')}/" "$record"
  return 0
}
