// heartbeat_dir.hpp's C++ face of heartbeat_dir_c.c, the one implementation (the gputrace shim
// calls it from C in the job prolog).
#include "spank/gputrace/core/heartbeat_dir.hpp"

#include <string>

#include "spank/gputrace/core/heartbeat_dir_c.h"

namespace acme::telemetry {

std::string prepare_heartbeat_dir(std::string_view base, long long job_id, uid_t uid, gid_t gid) {
    char error[2048] = "";
    if (acme_heartbeat_prepare(std::string(base).c_str(), job_id, uid, gid, error, sizeof error) == 0) return {};
    return error;
}

void remove_heartbeat_dir(std::string_view base, long long job_id) {
    acme_heartbeat_remove(std::string(base).c_str(), job_id);
}

std::optional<double> heartbeat_mtime(std::string_view base, long long job_id, std::string_view node) {
    struct timespec mtime {};
    if (acme_heartbeat_mtime(std::string(base).c_str(), job_id, std::string(node).c_str(), &mtime) != 0) return std::nullopt;
    return static_cast<double>(mtime.tv_sec) + static_cast<double>(mtime.tv_nsec) / 1e9;
}

}  // namespace acme::telemetry
