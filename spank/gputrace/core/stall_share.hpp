// How a job's samplers on different nodes see each other's progress: each writes one line
// (format_state) to <share>/<job>.<node> at every look, and reads its peers' files. The share
// is a directory the admin names (stall_share=), root's, on a file system every node mounts;
// the files are written as root with O_NOFOLLOW under a directory opened once, and a directory
// that anyone else could write is refused (its files could be forged to hide or fake a stall).
#pragma once

#include <string>
#include <vector>

#include "spank/gputrace/core/stall.hpp"

namespace acme::telemetry {

class StallShare {
public:
    // Opens (creating, mode 0700) `dir`. ok() is false with error() set when it cannot be used.
    explicit StallShare(const std::string& dir);
    ~StallShare();
    StallShare(const StallShare&) = delete;
    StallShare& operator=(const StallShare&) = delete;
    bool ok() const { return fd_ >= 0; }
    const std::string& error() const { return error_; }

    bool write(long long job_id, const NodeState& s);
    // The states of `nodes` that can be read (missing or unparsable files are left out).
    std::vector<NodeState> read(long long job_id, const std::vector<std::string>& nodes) const;
    void remove(long long job_id, const std::string& node);

private:
    int fd_ = -1;
    std::string error_;
};

}  // namespace acme::telemetry
