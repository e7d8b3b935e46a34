// Where the plugin and its sampler meet: the pid file the sampler writes and the epilog reads,
// and the sampler's log. Both under the root-owned spool directory, keyed by node and job
// (several slurmd may share a host, as in the minicluster).
#pragma once

#include <string>
#include <string_view>

#include <fmt/format.h>

namespace acme::telemetry {

inline std::string sampler_run_dir(std::string_view spool) { return fmt::format("{}/run", spool); }

inline std::string sampler_pidfile(std::string_view spool, std::string_view node, long long job_id) {
    return fmt::format("{}/run/{}.{}.sampler.pid", spool, node, job_id);
}

inline std::string sampler_logfile(std::string_view spool, std::string_view node) {
    return fmt::format("{}/{}.sampler.log", spool, node);
}

}  // namespace acme::telemetry
