// The runs of one job as goodput (goodput.hpp) reads them: slurmdbd's rows of a requeue chain
// (sacct -D) and the acme record each run's epilogs left in its AdminComment (acme-record(5)):
// the fault and its diagnosis, the stall verdict, the checkpoint the run resumed from and when
// that checkpoint was written, the GPUs that sat idle. Pure: the unit tests build the rows.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "acct/gpuacct/core/goodput.hpp"
#include "common/slurm/accounting.hpp"

namespace acme::acct {

// Slurm's final states that end a run in a fault (sacct's words): FAILED, NODE_FAIL,
// OUT_OF_MEMORY, BOOT_FAIL. A cancellation or a time limit is not a fault a later run makes good.
bool failed_state(std::string_view state);

// Each job's runs, oldest first (slurmdbd's row order). A damaged record adds a line to
// `warnings` naming the job; that run is read from slurmdbd's fields alone.
std::map<std::int64_t, std::vector<GoodputRun>> goodput_runs(std::span<const slurm::AccountedRun> rows,
                                                             std::vector<std::string>& warnings);

// One job's runs as goodput reads them, from that job's rows oldest first.
std::vector<GoodputRun> goodput_runs_of_job(std::span<const slurm::AccountedRun> rows, std::vector<std::string>& warnings);

// gpuacct goodput's sum over the rows (each job's runs), of the jobs whose newest run has one
// of these users, accounts and partitions (empty: any). `now` ends the runs still running.
struct GoodputFilter {
    std::vector<std::string> users, accounts, partitions;
};
ClusterGoodput cluster_goodput(std::span<const slurm::AccountedRun> rows, const GoodputFilter& filter, double now,
                               std::vector<std::string>& warnings);

// The same sum taken one job at a time (slurm::for_each_accounted_job's order), so no job is
// kept: a million jobs cost the sums and one job's runs.
class ClusterGoodputStream {
public:
    ClusterGoodputStream(GoodputFilter filter, double now) : filter_(std::move(filter)), now_(now) {}
    // One job's rows, oldest first.
    void add_job(std::span<const slurm::AccountedRun> rows, std::vector<std::string>& warnings);
    void add_job_runs(const std::vector<GoodputRun>& runs);
    ClusterGoodput result() const { return sum_.result(); }

private:
    GoodputFilter filter_;
    double now_;
    ClusterGoodputSum sum_;
};

}  // namespace acme::acct
