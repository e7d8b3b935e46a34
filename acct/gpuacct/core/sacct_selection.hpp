// Which of the jobs read a command lists: sacct's filters beyond JobFilter (-N, --name, -q, -g,
// -k/-K, -x, -M/-L), the period around -j, and -T's cut. Parsed from the options before anything
// is read (bad input: no output), applied to what was read (load.cpp). Pure but for the group
// names -g looks up and the cluster name -M compares with (asked of slurmctld when ask_slurm).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "acct/gpuacct/core/context.hpp"
#include "acct/gpuacct/core/query_options.hpp"

namespace acme::acct {

// sacct's filters beyond JobFilter's.
struct SacctFilter {
    std::vector<std::string> nodes, names, qos, clusters;
    std::vector<std::int64_t> gids;
    std::vector<std::uint32_t> associations;
    std::optional<std::uint32_t> tl_min, tl_max;  // minutes; kUnlimited: UNLIMITED
    bool any_accounting_only() const { return !qos.empty() || !gids.empty() || !associations.empty() || tl_min || tl_max; }
    bool any() const { return any_accounting_only() || !nodes.empty() || !names.empty() || !clusters.empty(); }
};

// Throws Failure (one line) on a bad node list, group, association id or time limit.
SacctFilter sacct_filter_of(const QueryOptions& o);

// sacct's -N: a job that ran on any of the nodes; its node list is Slurm's (ranged) or the
// spools' rows.
bool ran_on(const Job& job, const std::vector<std::string>& nodes);

// What `f` keeps, a job at a time. sacct lists only the local cluster's jobs unless -M or -L
// says otherwise (slurmctld is asked the local name once, here); the spools are this cluster's,
// kept by -M only when it names it.
class SacctSelection {
public:
    SacctSelection(const SacctFilter& f, const QueryOptions& o, bool ask_slurm, Source source);
    // `x`: what slurmdbd's newest run of the job adds (empty for a spool's job).
    bool keeps(const Job& job, const AccountedExtra& x) const;

private:
    const SacctFilter& f_;
    Source source_;
    bool none_ = false;                  // the spools, and -M names other clusters
    std::vector<std::string> clusters_;  // slurmdbd's jobs of these clusters only; empty: any
};

// Drops from context.jobs what `f` leaves out (SacctSelection over context.accounted).
void apply_sacct_filter(const SacctFilter& f, const QueryOptions& o, bool ask_slurm, Source source, Context& context);

// -j with -S/-E: slurmdbd was asked for the ids only; the period still bounds them, as sacct's
// window does (ended at or after start, began at or before end).
bool outside(const Job& job, const Period& period);

// -T: a job's start and end cut to the period, as sacct's --truncate (Elapsed follows).
void truncate_to(const Period& period, double now, std::vector<Job>& jobs);
void truncate_to(const Period& period, double now, Job& job);

}  // namespace acme::acct
