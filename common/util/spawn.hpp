// Starting a helper that must outlive its parent and never inherit anything from it: the
// SPANK job prolog runs inside a slurmstepd whose signal mask, dispositions and descriptors a
// helper must not keep (a helper that ignores SIGTERM keeps jobs COMPLETING).
#pragma once

#include <string>
#include <vector>

namespace acme::util {

// Double-forks `argv` (argv[0] is the program path) into a new session with an empty signal
// mask, default dispositions, stdin/stdout on /dev/null, stderr appended to `log_path`
// (or /dev/null), no other descriptors, and exactly `env`. Returns once the intermediate child
// has been reaped; false (with error) if the program could not be started.
bool spawn_detached(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                    const std::string& log_path, std::string& error);

struct RunResult {
    bool started = false;
    bool timed_out = false;   // killed (with its process group) after the timeout
    int wait_status = 0;
    std::string output;       // its stdout, at most max_output bytes
};

// Runs `argv` with exactly `env` in its own process group, stdin on /dev/null, stderr appended
// to log_path, default signal state and no inherited descriptors; waits at most timeout_s.
RunResult run_bounded(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      const std::string& log_path, double timeout_s, std::size_t max_output = 4096);

}  // namespace acme::util
