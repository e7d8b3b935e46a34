// What gpuacct goodput reads of a directory of node spools beside the jobs and diagnoses that
// scan_spools streams (spool_set.hpp): every run's stall verdict that was not withdrawn, and each
// job's GPUs whose summary says idle. Both are small next to the jobs (a stall is rare,
// an idle GPU a few percent of jobs), so they are read whole, one statement per file, and looked
// up by job as the jobs stream past.
#pragma once

#include <cstdint>
#include <string>
#include <span>
#include <utility>
#include <vector>

#include "common/store/spool_set.hpp"

namespace acme::store {

struct GoodputSide {
    // Each node's row of each run, by job id (sorted: looked up a million times, a flat array
    // beats a hash map's scattered nodes).
    std::vector<Stall> stalls;
    // Every node's GPU whose summary says idle, by job id: its job and when its last sample was
    // taken (0: not recorded), so that a requeued job's newest run leaves out the GPUs an earlier
    // run left on another node's spool. Jobs with no idle GPU are absent.
    std::vector<std::pair<std::int64_t, double>> idle_gpus;

    std::span<const Stall> stalls_of(std::int64_t job_id) const;
    std::span<const std::pair<std::int64_t, double>> idle_gpus_of(std::int64_t job_id) const;
};

// Every *.db file directly in dir, in name order. A file that cannot be read is passed over:
// scan_spools reports it (one line in its problems) when it reads the jobs.
GoodputSide read_goodput_side(const std::string& dir);

}  // namespace acme::store
