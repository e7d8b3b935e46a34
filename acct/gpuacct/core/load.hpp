// gpuacct's reading: the jobs a command lists, from slurmdbd or the node spools, with what
// each view needs and nothing more (a million jobs are streamed, not held, where a view only
// aggregates them), filtered as sacct filters. acct/gpuacct/cli.cpp parses the options into a
// QueryOptions and a LoadRequest, calls load and renders what comes back.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <vector>

#include "acct/gpuacct/core/aggregate.hpp"
#include "acct/gpuacct/core/context.hpp"
#include "acct/gpuacct/core/query_options.hpp"

namespace acme::acct {

// When the jobs view's fields need a job's ACME1 records (decoding them is most of the cost of
// a job read from slurmdbd): always, or only for a job whose slurmdbd row lacks what the record
// can stand in for (its node count, node list, GPU count). The CLI says, from -o.
struct RecordUse {
    bool always = true;
    bool nodes = false, nodelist = false, gpus = false;
};

// What a command reads, beyond its options: parsed from them (and the environment) by the CLI.
struct LoadRequest {
    ViewKind kind = ViewKind::jobs;
    bool everything = false;        // the HTML report: what every view needs
    std::vector<std::int64_t> ids;  // -j; empty: every job of the period
    Period period;
    JobFilter filter;
    double now = 0;          // epoch seconds
    bool ask_slurm = false;  // slurm.conf found: ask slurmctld / slurmdbd
    RecordUse records;       // the jobs view from slurmdbd (the other views decide for themselves)
};

// Reads, filters and returns the jobs; notes and warnings go to err, one line each. Throws
// Failure when the source cannot be read or the options ask what it does not hold. `source`,
// when given, is set to where the job records came from.
Context load(const QueryOptions& o, const LoadRequest& request, std::ostream& err, Source* source = nullptr);

}  // namespace acme::acct
