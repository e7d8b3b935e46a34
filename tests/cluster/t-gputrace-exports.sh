#!/usr/bin/env bash
# gputrace.so exports exactly what Slurm's loader looks up: plugin_name/type/version,
# spank_plugin_version and slurm_spank_* (never init/fini, nothing of its C++ insides).
. "$(dirname "$0")/lib.sh"

so=$ACME_BUILD_DIR/spank/.libs/gputrace.so
[ -f "$so" ] || fail "$so not built"
syms=$(nm -D --defined-only "$so" | awk '{print $3}' | sort)
for want in plugin_name plugin_type plugin_version spank_plugin_version slurm_spank_init slurm_spank_job_prolog slurm_spank_job_epilog; do
  grep -qx "$want" <<<"$syms" || fail "$want is not exported: $syms"
done
extra=$(grep -vE '^(plugin_name|plugin_type|plugin_version|spank_plugin_version|slurm_spank_[a-z_]+)$' <<<"$syms" || true)
assert_eq "" "$extra" "unexpected exported symbols"
# And Slurm accepts it: sbatch --help lists the option.
assert_contains "$(sbatch --help 2>&1)" "--gpu-telemetry" "sbatch --help"
