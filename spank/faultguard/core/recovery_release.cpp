#include "spank/faultguard/core/recovery_release.hpp"

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <thread>

#include <fmt/format.h>

#include "common/slurm/actions.hpp"
#include "common/slurm/jobs.hpp"
#include "common/util/spawn.hpp"

namespace acme::recovery {

int release_after_requeue(unsigned job_id, long long restart, const std::string& exclude_node) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
    while (std::chrono::steady_clock::now() < deadline) {
        const auto record = slurm::load_job(job_id);
        if (!record) return 1;
        // The requeue has landed when the job is pending again and no longer completing; Slurm
        // then pushes its eligibility out by cred_expire.
        if (record->state == 0 /* JOB_PENDING */ && record->restart_count > restart && !record->completing) {
            if (record->begin_time <= static_cast<double>(std::time(nullptr)) && exclude_node.empty()) return 0;
            const auto err = slurm::release_job(job_id, exclude_node);
            if (!err.empty()) fmt::print(stderr, "job {}: cannot make the requeued job eligible: {}\n", job_id, err);
            return err.empty() ? 0 : 1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    return 1;
}

std::string start_release_watcher(unsigned job_id, long long restart, const std::string& log_path, const std::string& exclude_node) {
    std::vector<std::string> env = {"PATH=/usr/bin:/bin"};
    if (const char* conf = getenv("SLURM_CONF")) env.push_back(fmt::format("SLURM_CONF={}", conf));
    std::string error;
    std::vector<std::string> argv = {"/proc/self/exe", "--release", std::to_string(job_id), "--restart", std::to_string(restart)};
    if (!exclude_node.empty()) argv.insert(argv.end(), {"--exclude-node", exclude_node});
    if (!util::spawn_detached(argv, env, log_path, error))
        return error;
    return {};
}

}  // namespace acme::recovery
