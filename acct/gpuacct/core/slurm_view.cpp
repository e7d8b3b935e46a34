#include "acct/gpuacct/core/slurm_view.hpp"

#include <cmath>
#include <ostream>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "acct/gpuacct/core/job_states.hpp"
#include "common/slurm/accounting.hpp"
#include "common/slurm/nodes.hpp"

namespace acme::acct {

std::optional<std::vector<SlurmNode>> slurm_nodes(std::ostream& err) {
    std::string error;
    auto nodes = slurm::load_node_health(error);
    if (!nodes) {
        fmt::print(err, "gpuacct: note: node states not shown: {}\n", error);
        return std::nullopt;
    }
    std::vector<SlurmNode> out;
    for (auto& n : *nodes) out.push_back({std::move(n.name), std::move(n.state), std::move(n.reason)});
    return out;
}

void check_accounting(const std::vector<Job>& jobs, const std::vector<std::int64_t>& ids, double start, double end,
                      std::ostream& err) {
    std::string why_not;
    const auto accounted = slurm::load_accounted_jobs(ids, start, end, why_not);
    if (!accounted) {
        fmt::print(err, "gpuacct: note: {}: job records come from the node spools only\n", why_not);
        return;
    }
    std::unordered_map<std::int64_t, const slurm::AccountedJob*> by_id;
    for (const auto& a : *accounted) by_id[a.job_id] = &a;
    for (const auto& job : jobs) {
        const auto it = by_id.find(job.job_id);
        if (it == by_id.end() || job.state.empty()) continue;
        const auto& a = *it->second;
        std::vector<std::string> diffs;
        if (!state_is(job.state, a.state)) diffs.push_back(fmt::format("state {} vs {}", job.state, a.state));
        if (a.start > 0 && std::fabs(a.start - job.start) > 1) diffs.push_back("start");
        if (a.end > 0 && std::fabs(a.end - job.end) > 1) diffs.push_back("end");
        const std::string& exit_code = job.text().exit_code;
        if (!exit_code.empty() && exit_code != a.exit_code)
            diffs.push_back(fmt::format("exit code {} vs {}", exit_code, a.exit_code));
        if (!diffs.empty()) {
            std::string what;
            for (const auto& d : diffs) what += (what.empty() ? "" : ", ") + d;
            fmt::print(err, "gpuacct: warning: job {}: node spool and slurmdbd disagree ({}), spool shown\n", job.job_id, what);
        }
    }
}

}  // namespace acme::acct
