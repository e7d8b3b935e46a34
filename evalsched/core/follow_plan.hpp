// evalsched follow: which of a training run's complete checkpoints to evaluate. Pure (the
// daemon's follow watcher feeds it what the scan found and what the store remembers), so the
// rules of --every and --keep-up are tested without a cluster.
#pragma once

#include <string>
#include <vector>

namespace acme::evalsched {

struct FollowOptions {
    long long every = 0;   // evaluate a checkpoint at least this many steps after the last evaluated one; 0: every one
    bool keep_up = false;  // when behind, only the newest complete checkpoint
};

struct FollowedCheckpoint {
    long long step = 0;
    std::string path;
};

// What the follow remembers: the newest step it decided on (submitted or skipped), the newest
// it submitted (-1: none yet), and whether an evaluation it submitted is still running.
struct FollowMemory {
    long long last_step = -1;
    long long last_submitted = -1;
    bool evaluating = false;
};

struct FollowDecision {
    FollowedCheckpoint checkpoint;
    bool submit = false;
    std::string reason;  // why it is skipped
};

// `complete`: the complete checkpoints the scan found, oldest first. Decides, oldest first,
// each one newer than memory.last_step; one not decided yet (with --keep-up, while an
// evaluation runs) is left out, to be decided by a later scan.
std::vector<FollowDecision> plan_follow(const std::vector<FollowedCheckpoint>& complete, const FollowMemory& memory,
                                        const FollowOptions& options);

}  // namespace acme::evalsched
