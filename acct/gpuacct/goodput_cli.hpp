// gpuacct -j ID --goodput: each job's goodput (acct/gpuacct/core/goodput.hpp), read from every
// run slurmdbd keeps of it (sacct -D). The node spools keep only a job's last run, so they
// cannot give it: without slurmdbd the command says so and exits 1. gpuacct goodput (the
// cluster's sum) reads either.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <vector>

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace acme::gpuacct {

struct GoodputRequest {
    std::vector<std::int64_t> ids;
    double now = 0;
    bool ask_slurm = false;   // slurm.conf found
    bool spool = false;       // --spool-dir, $ACME_SPOOL_DIR or --source spool
    bool json = false;
};

// Prints each job's goodput block (or, with json, {"jobs":[{"job_id":..,"goodput":{..}}]}).
// Throws acct::Failure (one line) when slurmdbd cannot be read or holds none of the jobs.
int print_goodput(const GoodputRequest& request, std::ostream& out, std::ostream& err);

// gpuacct goodput -S -E [-u] [-A] [-r]: the period's GPU-hours and where they went, over every
// job with a run in the period (each job's runs in it), filtered by user, account, partition.
// From slurmdbd; from the node spools in spool_dir with --spool-dir/--source spool or where no
// slurm.conf is found (the spools hold a requeued job's newest run only: goodput_spool.hpp).
struct ClusterGoodputRequest {
    double start = 0, end = 0;
    std::vector<std::string> users, accounts, partitions;
    double now = 0;
    bool ask_slurm = false, spool = false, json = false;
    std::string spool_dir;
    bool slurmdbd = false;  // --source slurmdbd: never the spools
};
int print_cluster_goodput(const ClusterGoodputRequest& request, std::ostream& out, std::ostream& err);

}  // namespace acme::gpuacct
