// gpuacct -j ID --goodput: each job's goodput (acct/gpuacct/core/goodput.hpp), read from every
// run slurmdbd keeps of it (sacct -D). The node spools keep only a job's last run, so they
// cannot give it: without slurmdbd the command says so and exits 1.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <vector>

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

}  // namespace acme::gpuacct
