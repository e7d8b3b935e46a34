// The srun processes that run trials as job steps inside pilots (mode = pilots). Each is
// started as the evaluation's user (setpriv drops root: uid, gid and the user's groups, before
// srun runs) through posix_spawn, which is safe in this threaded daemon; a small thread per
// step waits for it and wakes the scheduler the moment it exits, so a freed pilot gets its next
// trial at once instead of at the next poll. The daemon keeps only pids and exit statuses here:
// after a restart none is known, and the scheduler adopts the steps from the store.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace acme::evalsched {

class StepRunner {
public:
    // `wake`: called from the waiting thread when a step's srun exits.
    explicit StepRunner(std::function<void()> wake);
    // Starts argv (argv[0] found on the daemon's PATH) with exactly `env`, stdin /dev/null,
    // stdout and stderr the daemon's log, under `attempt`. False with `error` when it cannot.
    bool start(std::int64_t attempt, const std::vector<std::string>& argv, const std::vector<std::string>& env, std::string& error);
    // Started by this daemon and not yet forgotten (running or exited).
    bool known(std::int64_t attempt) const;
    // Its wait status once it exited; nullopt while it runs (or when unknown).
    std::optional<int> exited(std::int64_t attempt) const;
    void forget(std::int64_t attempt);

private:
    struct Shared {
        std::mutex mutex;
        std::map<std::int64_t, std::optional<int>> status;  // attempt -> wait status once reaped
        std::function<void()> wake;
    };
    // Shared with the waiting threads, which may outlive a round.
    std::shared_ptr<Shared> shared_;
};

}  // namespace acme::evalsched
