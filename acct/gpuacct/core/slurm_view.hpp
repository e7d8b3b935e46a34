// What gpuacct asks Slurm itself: node states for --nodes, and slurmdbd's job records to check
// the node spools against. Each says once, on stderr, when Slurm cannot answer.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <vector>

#include "acct/gpuacct/core/context.hpp"

namespace acme::acct {

std::optional<std::vector<SlurmNode>> slurm_nodes(std::ostream& err);

// Warns for every job whose state, start, end or exit code differ between the spool and
// slurmdbd; notes once when there is no accounting to compare with.
void check_accounting(const std::vector<Job>& jobs, const std::vector<std::int64_t>& ids, double start, double end,
                      std::ostream& err);

}  // namespace acme::acct
