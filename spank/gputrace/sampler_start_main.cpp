// acme-gpu-sampler-start: the job prolog's half of starting a job's sampler (gputrace(8), "The
// job prolog"). gputrace's C shim forks one detached child per traced job and node; that child
// (root, background priority, SIGTERM/SIGINT/SIGHUP blocked, its pid already in the sampler's
// pid file) waits for the job's first step (start_wait) and executes this program, which reads
// the plugstack arguments and the values the shim passed, decides the request (off, an interval,
// the cluster's default) and executes the sampler in its place: the same pid, so the pid file the
// prolog wrote names the sampler for its whole life, and a stop signal the epilog sent meanwhile
// stays pending until the sampler's handlers take it. Its environment is the shim's fixed one:
// nothing of the job's reaches it but the checked values of its command line.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "spank/gputrace/core/gputrace_config.hpp"
#include "spank/gputrace/core/sampler_paths.hpp"
#include "spank/gputrace/core/sampler_start.hpp"

namespace {

void log_line(const std::string& prefix, const std::string& msg) { fmt::print(stderr, "{}: {}\n", prefix, msg); }

// The pid file names this process (the shim's child wrote "PID START"): remove it when no
// sampler takes its place, so the epilog finds nothing to stop.
void drop_own_pidfile(const std::string& pidfile) {
    char buf[64] = {0};
    FILE* f = std::fopen(pidfile.c_str(), "re");
    if (!f) return;
    const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    const std::string mine = fmt::format("{} ", getpid());
    if (std::string_view(buf, n).starts_with(mine)) unlink(pidfile.c_str());
}

}  // namespace

int main(int argc, char** argv) {
    using namespace acme::telemetry;
    std::vector<std::string_view> words(argv + (argc > 0 ? 1 : 0), argv + argc);
    std::string prefix = "acme-gpu-sampler-start";
    if (words.size() == 1 && words[0] == "--help") {
        std::puts("acme-gpu-sampler-start: run by gputrace's job prolog only (gputrace(8)); it executes acme-gpu-sampler");
        return 0;
    }
    std::string error;
    const auto args = parse_sampler_start_args(words, error);
    if (!args) {
        log_line(prefix, error + "; no sampler started");
        return 2;
    }
    prefix = fmt::format("acme-gpu-sampler-start[job {} on {}]", args->job, args->node);
    std::vector<std::string_view> plugstack(args->plugstack.begin(), args->plugstack.end());
    const auto [config, errors] = parse_plugstack_args(plugstack, ACME_HELPER_DIR "/acme-gpu-sampler");
    for (const auto& e : errors) log_line(prefix, e);
    const std::string pidfile = sampler_pidfile(config.spool, args->node, args->job);
    std::vector<std::string> notes;
    const auto launch = sampler_launch(*args, config, notes);
    for (const auto& n : notes) log_line(prefix, n);
    if (!launch) {
        drop_own_pidfile(pidfile);
        return 0;
    }
    log_line(prefix, fmt::format("sampling GPUs {} every {} s", args->gpus, launch->interval));
    std::vector<char*> cargv, cenv;
    for (const auto& a : launch->argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    for (const auto& e : launch->env) cenv.push_back(const_cast<char*>(e.c_str()));
    cenv.push_back(nullptr);
    std::fflush(stderr);
    // The stop signals stay blocked across the exec: the sampler unblocks them once its handlers
    execve(cargv[0], cargv.data(), cenv.data());
    log_line(prefix, fmt::format("cannot start the sampler {}: {}", launch->argv[0], std::strerror(errno)));
    drop_own_pidfile(pidfile);
    return 127;
}
