// C++ at the SPANK ABI. spank.h declares the slurm_spank_* callbacks outside extern "C", so
// it is included inside one here; and every callback body runs through guarded(), which
// catches everything (an exception crossing into slurmstepd or sbatch is std::terminate) and
// fails open. Plugins define plugin_name/plugin_type/plugin_version themselves as exported
// extern "C" data: SPANK_PLUGIN's `const char plugin_name[]` has internal linkage in C++.
#pragma once

extern "C" {
#include <slurm/spank.h>
}

// Plugins build with -fvisibility=hidden; what Slurm's loader looks up is marked with this
// (and the version script spank/spank.lds lists the same names).
#define ACME_SPANK_EXPORT __attribute__((visibility("default")))

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/version.hpp"

namespace acme::spank {

// Runs fn (returning int); on an exception logs "<plugin>: <where>: <what>" and returns
// `on_error` (0 to fail open).
template <typename Fn>
int guarded(const char* plugin, const char* where, int on_error, Fn&& fn) noexcept {
    try {
        return fn();
    } catch (const std::exception& e) {
        slurm_error("%s: %s: %s", plugin, where, e.what());
    } catch (...) {
        slurm_error("%s: %s: unknown exception", plugin, where);
    }
    return on_error;
}

// The first line a plugin logs in a process, once: after an upgrade, which acme-slurm built
// against which Slurm is loaded is the question before any other. slurmd's and slurmstepd's
// logs (remote, job_script, slurmd contexts) get it at info; srun/sbatch/salloc on a user's
// terminal only with -v, or every user would read it on every submission. They call init
// before they parse -v, so a verbose line from there is always dropped: on a user's terminal
// only a callback with `options_parsed` (init_post_opt) logs it. `logged` is the plugin's own
// flag, so each plugin in the process says it once.
inline void log_build_once(const char* plugin, std::atomic<bool>& logged, bool options_parsed) noexcept {
    const spank_context_t ctx = spank_context();
    const bool user_terminal = ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR;
    if (user_terminal && !options_parsed) return;
    if (logged.exchange(true)) return;
    if (user_terminal)
        slurm_verbose("%s: acme-slurm %s built against Slurm %s", plugin, kPackageVersion, kSlurmVersion);
    else
        slurm_info("%s: acme-slurm %s built against Slurm %s", plugin, kPackageVersion, kSlurmVersion);
}

// The process environment (job_script context: the Prolog/Epilog environment slurmd built).
inline std::string getenv_str(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

// A Slurm node name usable in a spool path (it names a file: no '/').
inline bool plain_node_name(const std::string& node) { return !node.empty() && node.find('/') == std::string::npos; }

// plugstack.conf arguments as views (they live as long as the callback).
inline std::vector<std::string_view> plugstack_args(int ac, char** av) {
    std::vector<std::string_view> args;
    for (int i = 0; i < ac; ++i) args.emplace_back(av[i]);
    return args;
}

// Milliseconds since t0: the "(prolog N ms)" or "(epilog N ms)" that ends a plugin's line in
// slurmd's log, so an admin (and tests/bench/telemetry) sees what each job paid for it.
inline double ms_since(std::chrono::steady_clock::time_point t0) noexcept {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

inline const char* context_name(spank_context_t ctx) noexcept {
    switch (ctx) {
        case S_CTX_LOCAL: return "local";
        case S_CTX_REMOTE: return "remote";
        case S_CTX_ALLOCATOR: return "allocator";
        case S_CTX_SLURMD: return "slurmd";
        case S_CTX_JOB_SCRIPT: return "job_script";
        default: return "error";
    }
}

}  // namespace acme::spank
