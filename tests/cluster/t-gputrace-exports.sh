#!/usr/bin/env bash
# gputrace.so and faultguard.so export exactly what Slurm's loader looks up: plugin_name/type/
# version, spank_plugin_version and slurm_spank_* (never init/fini, nothing of their insides), and
# link libc alone: they are the shims every srun and slurmstepd loads (#41). Their C++
# implementations beside them export only the entry points the shims look up.
. "$(dirname "$0")/lib.sh"

for plugin in gputrace faultguard; do
  so=$ACME_BUILD_DIR/spank/.libs/$plugin.so
  [ -f "$so" ] || fail "$so not built"
  syms=$(nm -D --defined-only "$so" | awk '{print $3}' | sort)
  for want in plugin_name plugin_type plugin_version spank_plugin_version slurm_spank_init slurm_spank_job_prolog slurm_spank_job_epilog; do
    grep -qx "$want" <<<"$syms" || fail "$plugin.so: $want is not exported: $syms"
  done
  extra=$(grep -vE '^(plugin_name|plugin_type|plugin_version|spank_plugin_version|slurm_spank_[a-z_]+)$' <<<"$syms" || true)
  assert_eq "" "$extra" "$plugin.so: unexpected exported symbols"
  needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  assert_eq "libc.so.6 " "$needed" "$plugin.so: the libraries the shim needs"
  impl=$ACME_BUILD_DIR/spank/.libs/${plugin}_impl.so
  [ -f "$impl" ] || fail "$impl not built"
  extra=$(nm -D --defined-only "$impl" | awk '{print $3}' | grep -vE "^acme_${plugin}_impl_[a-z_]+\$" || true)
  assert_eq "" "$extra" "${plugin}_impl.so: exported symbols beyond its entry points"
done
# And Slurm accepts it: sbatch --help lists the option.
assert_contains "$(sbatch --help 2>&1)" "--gpu-telemetry" "sbatch --help"
