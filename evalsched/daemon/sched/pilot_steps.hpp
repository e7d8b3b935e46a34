// The srun processes that run trials as job steps inside pilots (mode = pilots). The daemon is
// root and the step is the user's, so the order matters: a forked child becomes the user first
// (setgroups, setresgid, setresuid: the groups as the group database has them now), closes every
// descriptor of the daemon, and only then execs srun with the user's environment. Nothing runs
// as root with that environment: a loader variable in it (LD_PRELOAD, ...) reaches only the
// user's own processes. The step's stdin is /dev/null and srun's own stdout and stderr are a
// file in the attempt's directory, opened as the user (the trial's output goes to its log
// through srun --output), so nothing the user runs writes into the daemon's log.
//
// A small thread per step waits for it and wakes the scheduler the moment it exits, so a freed
// pilot gets its next trial at once instead of at the next poll. The daemon keeps only pids and
// exit statuses here: after a restart none is known, and the scheduler adopts the steps from
// the store.
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

#include "evalsched/daemon/user_files.hpp"

namespace acme::evalsched {

// What a step is: the program (argv[0] an absolute path, the admin's srun), its environment,
// who runs it, and the directory (made as that user when missing) holding `output` (srun's own
// messages). A child that cannot become the user exits 126 before it runs anything; one that
// cannot exec exits 127 after writing why to `output`.
struct StepLaunch {
    std::vector<std::string> argv;
    std::vector<std::string> env;
    UserIdentity who;
    std::string dir;
    std::string output = "srun.out";
};
inline constexpr int kStepCannotBecomeUser = 126;
inline constexpr int kStepCannotExec = 127;

class StepRunner {
public:
    // `wake`: called from the waiting thread when a step's srun exits.
    explicit StepRunner(std::function<void()> wake);
    // Starts the step under `attempt`. False with `error` when it cannot fork.
    bool start(std::int64_t attempt, const StepLaunch& launch, std::string& error);
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
