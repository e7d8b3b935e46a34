# evalsched-stage.sh: sourced by every evalschedd trial script (bash). Defines evalsched_stage,
# which copies a checkpoint from shared storage into a node-local cache once per node, however
# many trials start there at once, and evicts least-recently-used copies above a size.
#
#   evalsched_stage CHECKPOINT CACHE_DIR MAX_BYTES RECORD_JSON [PATTERNS]
#
# PATTERNS (the suite's stage globs, one per line; evalsched-suite(5)): only the files whose
# path inside the checkpoint matches an include and no '!' exclude are copied (optimizer state
# and global_step*/ stay on shared storage). Without it, the whole checkpoint.
#
# Sets EVALSCHED_STAGED to the local copy and keeps a shared lock on it (fd 9) until the trial
# exits, so eviction never removes a copy a running trial reads. RECORD_JSON gets
# {"copied": 0|1, "bytes": N, "seconds": S}: bytes read from shared storage by this trial.
#
#   evalsched_private_dir BASE NAME
#
# Prints BASE/NAME, the user's own cache directory in the node's shared, sticky stage_dir
# (/dev/shm): made 0700 if missing. Its name is predictable, so another user may have made it
# first to read or replace the copies, or to make staging fail: unless it is a directory (not
# a symlink) owned by this user with mode 0700, it is refused with one line naming the owner.

evalsched_private_dir() {
  local dir=$1/$2 me owner mode
  me=$(id -u)
  mkdir -m 700 -- "$dir" 2>/dev/null
  if [ -L "$dir" ] || [ ! -d "$dir" ]; then
    echo "evalsched: staging directory $dir is not a directory (a symlink or a file?): ask the node's admin to remove it" >&2
    return 1
  fi
  read -r owner mode < <(stat -c '%u %a' -- "$dir") || return 1
  if [ "$owner" != "$me" ] || [ "$mode" != 700 ]; then
    echo "evalsched: staging directory $dir is owned by uid $owner with mode $mode, not by you (uid $me) with mode 700: ask the node's admin to remove it" >&2
    return 1
  fi
  printf '%s\n' "$dir"
}

evalsched_stage() {
  local src=$1 cache=$2 max=$3 record=$4 patterns=${5:-} key dest start end bytes=0 copied=0
  [ -d "$src" ] || { echo "evalsched: checkpoint $src is not a directory" >&2; return 1; }
  mkdir -p "$cache" && chmod 700 "$cache" || return 1
  # A copy made with other patterns holds other files: it is another copy.
  key=$(printf '%s' "$src${patterns:+
$patterns}" | sha256sum | cut -c1-16)
  dest=$cache/$key
  exec 9>"$dest.lock" || return 1
  start=$(date +%s.%N)
  # Shared while reading a complete copy, so trials on this node run side by side. Exclusive
  # only to copy: concurrent trials wait here (their shared lock) for that one copy. flock
  # cannot turn a lock into another atomically, so a copy is checked again under the shared
  # lock (an eviction may have slipped in between).
  while :; do
    flock -s 9 || return 1
    if [ -f "$dest/.evalsched-complete" ]; then
      touch "$dest/.evalsched-complete"
      break
    fi
    flock -u 9 && flock -x 9 || return 1
    if [ ! -f "$dest/.evalsched-complete" ]; then
      rm -rf "$dest" "$dest.tmp"
      if [ -n "$patterns" ]; then
        _evalsched_copy_matching "$src" "$dest.tmp" "$patterns" || { rm -rf "$dest.tmp"; return 1; }
      else
        cp -R "$src" "$dest.tmp" || { rm -rf "$dest.tmp"; return 1; }
      fi
      # File bytes only: what was read from shared storage, not directory blocks.
      bytes=$(($(find "$dest.tmp" -type f -printf '%s\n' | awk '{ s += $1 } END { printf "%.0f", s }') + bytes))
      mv "$dest.tmp" "$dest" && touch "$dest/.evalsched-complete" || return 1
      copied=1
    fi
  done
  end=$(date +%s.%N)
  printf '{"copied": %d, "bytes": %s, "seconds": %s}\n' "$copied" "$bytes" "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')" > "$record"
  EVALSCHED_STAGED=$dest
  _evalsched_evict "$cache" "$max" "$dest"
  return 0
}

# Copies the files of SRC whose relative path matches PATTERNS (see evalsched_stage) into DEST,
# keeping their subdirectories. A name with a newline is never a harness's file: skipped.
_evalsched_copy_matching() {
  local src=$1 dest=$2 patterns=$3 rel pat keep
  local -a inc=() exc=()
  while IFS= read -r pat; do
    [ -z "$pat" ] && continue
    if [ "${pat:0:1}" = '!' ]; then exc+=("${pat:1}"); else inc+=("$pat"); fi
  done <<<"$patterns"
  mkdir -p "$dest" || return 1
  while IFS= read -r -d '' rel; do
    case $rel in *$'\n'*) continue ;; esac
    keep=0
    for pat in "${inc[@]}"; do
      # shellcheck disable=SC2053
      [[ $rel == $pat ]] && { keep=1; break; }
    done
    [ "$keep" = 1 ] || continue
    for pat in "${exc[@]}"; do
      # shellcheck disable=SC2053
      [[ $rel == $pat ]] && { keep=0; break; }
    done
    [ "$keep" = 1 ] || continue
    (cd "$src" && cp -P --parents -- "$rel" "$dest/") || return 1
  done < <(cd "$src" && find . -mindepth 1 \( -type f -o -type l \) -printf '%P\0')
  return 0
}

# Least recently used first; a copy some trial holds (shared lock) is skipped.
_evalsched_evict() {
  local cache=$1 max=$2 keep=$3 total entry
  total=$(du -sb "$cache" 2>/dev/null | cut -f1)
  [ "${total:-0}" -le "$max" ] && return 0
  for entry in $(ls -1tr "$cache"/*/.evalsched-complete 2>/dev/null | xargs -r -n1 dirname); do
    [ "$entry" = "$keep" ] && continue
    (
      flock -n -x 8 || exit 0
      rm -rf "$entry"
    ) 8>"$entry.lock"
    total=$(du -sb "$cache" 2>/dev/null | cut -f1)
    [ "${total:-0}" -le "$max" ] && break
  done
  return 0
}
