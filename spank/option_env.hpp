// The environment names Slurm gives a SPANK option (spank(7); plugstack.c's
// spank_process_env_options and the Prolog/Epilog environment): spelled here once, so no
// plugin re-types another's. Pure and header-only: plugins compile it in, tests reach it.
#pragma once

#include <string>
#include <string_view>

namespace acme::spank {

namespace detail {
// Slurm turns everything but letters and digits in the plugin and option names into '_'.
inline std::string option_env(std::string_view prefix, std::string_view plugin, std::string_view option) {
    std::string out(prefix);
    const auto add = [&](std::string_view part) {
        for (const char c : part)
            out += ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) ? c : '_';
    };
    add(plugin);
    out += '_';
    add(option);
    return out;
}
}  // namespace detail

// What a user sets instead of the flag on sbatch/srun/salloc.
inline std::string submit_option_env(std::string_view plugin, std::string_view option) {
    return detail::option_env("SLURM_SPANK__SLURM_SPANK_OPTION_", plugin, option);
}

// Where a job's option value appears in the Prolog/Epilog environment (job_script context).
inline std::string job_script_option_env(std::string_view plugin, std::string_view option) {
    return detail::option_env("SPANK__SLURM_SPANK_OPTION_", plugin, option);
}

}  // namespace acme::spank
