#!/usr/bin/env bash
# `make install` as an admin runs it (DESTDIR): the plugstack snippet, the unit and the commented
# evalsched.conf name files that were installed, and the plugins, the helpers, gpuacct,
# faultdiag and evalschedd all compiled in the same spool, rules, labels and config paths. The
# unit's systemd-analyze exposure is printed and must stay below 5.0.
. "$(dirname "$0")/lib.sh"

root=$ACME_TEST_TMP/root
make -C "$ACME_BUILD_DIR" -s install DESTDIR="$root" >"$ACME_TEST_TMP/install.log" 2>&1 ||
  fail "make install DESTDIR=$root failed: $(tail -n 5 "$ACME_TEST_TMP/install.log")"
expand() { # a Makefile variable, fully expanded by make itself
  make -s -C "$ACME_BUILD_DIR" -f Makefile -f - print-var VAR="$1" <<<'print-var: ; @echo $($(VAR))'
}
slurmconf=$(expand slurmsysconfdir)
bindir=$(expand bindir)
sbindir=$(expand sbindir)
unitdir=$(expand systemdunitdir)
[ -n "$slurmconf" ] && [ -n "$bindir" ] || fail "cannot read the build's directories from its Makefile"
installed() { [ -e "$root$1" ] || fail "$2 names $1, which make install did not install"; }

# The snippet: every path it names is there; spool= and labels= directories exist (root-only).
snippet=$root$slurmconf/plugstack.conf.d/acme.conf
[ -f "$snippet" ] || fail "no plugstack snippet at $slurmconf/plugstack.conf.d/acme.conf"
arg() { grep "^optional .*/$1.so" "$snippet" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
for p in $(grep '^optional' "$snippet" | tr ' ' '\n' | grep -oE '(^|=)/[^ ]*' | tr -d =); do
  case $p in
    *.db) installed "$(dirname "$p")" "the snippet" ;;
    *) installed "$p" "the snippet" ;;
  esac
done
spool=$(arg gputrace spool)
[ -n "$spool" ] || fail "the snippet gives gputrace no spool="
assert_eq "$spool" "$(arg faultguard spool)" "faultguard's spool beside gputrace's"
assert_eq 700 "$(stat -c %a "$root$spool")" "mode of the installed spool directory"

# The CLIs' defaults are the snippet's paths.
default_of() { # program option: Debian 12's CLI11 prints "--opt TEXT=default", unstable's 2.6 "--opt TEXT [default]"
  local program=$1
  [[ $program == /* ]] || program=$root$bindir/$program
  "$program" --help 2>&1 | sed -n -E "s/^ *(-[a-zA-Z], *)?$2 TEXT(=| \[)([^] ]*).*/\3/p" | head -n 1
}
assert_eq "$spool" "$(default_of gpuacct --spool-dir)" "gpuacct's default --spool-dir"
assert_eq "$spool" "$(default_of faultdiag --spool-dir)" "faultdiag's default --spool-dir"
assert_eq "$(arg faultguard rules)" "$(default_of faultdiag --rules)" "faultdiag's default --rules"
assert_eq "$(arg faultguard labels)" "$(default_of faultdiag --labels)" "faultdiag's default --labels"

# What the plugins fall back to without arguments: every compiled-in acme path is installed.
# The snippet names the shims; each loads its implementation from its own directory (gputrace(8)).
for so in gputrace faultguard; do
  shim=$(grep -oE "/[^ ]*/$so\.so" "$snippet")
  installed "${shim%.so}_impl.so" "$so.so (its implementation, beside it)"
done
for so in gputrace faultguard gputrace_impl faultguard_impl; do
  plugin=$(grep -oE "/[^ ]*/${so%_impl}\.so" "$snippet")
  [[ $so == *_impl ]] && plugin=${plugin%.so}_impl.so
  # The strings the code holds (.rodata), not the debug info: its DW_AT_comp_dir names the
  # directory an object was compiled in, which ccache (CCACHE_NOHASHDIR) may have taken from
  # another checkout's build; it is never opened.
  for p in $(readelf -p .rodata "$root$plugin" | sed -n 's/^ *\[ *[0-9a-f]*\]  //p' |
    grep -E "^/[A-Za-z0-9_./-]*acme[A-Za-z0-9_./-]*$"); do
    case $p in
      "$spool") ;;
      # Not one literal: GCC builds a short std::string from 16-byte pieces of its literals,
      # which .rodata may hold side by side with no NUL between them ("/usr/local/var/sl" then
      # "/var/spool/acme"...); readelf reads the run as one string. Each literal it holds is
      # also in .rodata whole, and checked there.
      /*/usr/* | /*/var/*/var/*) ;;
      # A source file's own path (__FILE__ in an assertion), named only when the checkout's
      # path holds "acme"; never opened.
      "$ACME_BUILD_DIR"/* | "$ACME_SRC_DIR"/*) ;;
      *.db) installed "$(dirname "$p")" "$so.so (compiled in)" ;;
      *) installed "$p" "$so.so (compiled in)" ;;
    esac
  done
done

# evalschedd: the unit starts the installed binary on the installed config, which is the
# daemon's own default; the commented config's paths are installed too.
unit=$root$unitdir/evalschedd.service
[ -f "$unit" ] || fail "no evalschedd.service in $unitdir"
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
read -r daemon _ _ conf <<<"$exec_start"
installed "$daemon" "evalschedd.service's ExecStart"
assert_eq "$sbindir/evalschedd" "$daemon" "the unit's daemon"
installed "$conf" "evalschedd.service's -f"
assert_eq "$conf" "$(default_of "$root$daemon" --config)" "evalschedd's default -f"
for key in rules_dir stage_helper; do
  p=$(sed -n "s/^#$key=//p" "$root$conf")
  [ -n "$p" ] || fail "evalsched.conf shows no default for $key"
  installed "$p" "evalsched.conf's $key"
done
installed "$(dirname "$(sed -n 's/^#database=//p' "$root$conf")")" "evalsched.conf's database"

# Hardening: systemd's own rating of the unit.
if command -v systemd-analyze >/dev/null; then
  exposure=$(systemd-analyze security --offline=true "$unit" 2>&1 | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
  [ -n "$exposure" ] || fail "systemd-analyze security gave no exposure level for $unit"
  echo "systemd-analyze security evalschedd.service: exposure $exposure"
  awk -v e="$exposure" 'BEGIN { exit !(e < 5.0) }' || fail "evalschedd.service exposure $exposure is not below 5.0"
else
  echo "systemd-analyze not installed: exposure not rated"
fi
echo "installed paths agree: spool $spool, config $slurmconf/acme, unit $unitdir"
