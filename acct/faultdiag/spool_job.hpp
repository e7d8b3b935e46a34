// What the node spools know about one job: the diagnosis a faultguard epilog stored, and the
// raw inputs to diagnose it again (task exits, GPU events on the job's GPUs). Read-only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/diagnose/engine.hpp"

namespace acme::faultdiag {

struct StoredDiagnosis {
    std::string node;
    std::int64_t restart = 0;
    double ts = 0;
    diagnose::Diagnosis diagnosis;
};

struct SpoolJob {
    std::int64_t job_id = 0;
    std::vector<std::string> nodes;           // spools that hold anything about the job
    std::optional<StoredDiagnosis> stored;    // the newest run's most decisive one
    std::vector<int> task_wait_statuses;
    std::vector<diagnose::GpuEvent> gpu_events;  // already limited to each node's job GPUs
    std::vector<std::string> warnings;        // spool files that could not be read
    std::string log;                          // the log tail faultguard stored (newest run)
    bool found() const { return !nodes.empty(); }
};

// Reads every <dir>/*.db node spool. Throws std::runtime_error with a one-line message when dir
// itself cannot be listed.
SpoolJob read_spool_job(const std::string& dir, std::int64_t job_id);

}  // namespace acme::faultdiag
