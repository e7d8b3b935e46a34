// evalschedd's store as other commands read it: gpuacct's report shows evaluation trials on
// its timeline and reads them here, never spelling evalschedd's tables itself.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace acme::store {

// One trial attempt that reached slurmctld, as the timeline of gpuacct's report shows it.
struct AttemptSpan {
    std::string evaluation;  // "<run>/<checkpoint>", e.g. "run7/step-12000"
    std::string trial;       // the trial's key
    std::string node, state;
    std::optional<long long> job_id;
    int gpus = 0;
    double submitted = 0, ended = 0;  // Unix seconds; ended 0 while it runs
};

// Every submitted attempt, oldest submission first, read from evalschedd's file without
// writing to it (other commands read it while the daemon runs, and never migrate it). Throws
// std::runtime_error, one line naming the file, when it is not an evalschedd store.
std::vector<AttemptSpan> read_attempt_timeline(const std::string& path);

}  // namespace acme::store
