// --nodes: per node, what its GPUs reported and the failures its own diagnoses blamed on it,
// beside slurmctld's state and reason where slurmctld answers.
#include <array>
#include <map>

#include "acct/gpuacct/views.hpp"

namespace acme::gpuacct {
namespace {

constexpr std::array<Field, 13> kFields = {{
    {"NodeName", -10, "node (its spool file's name)"},
    {"State", 12, "slurmctld's node state, empty when slurmctld is not reachable"},
    {"Reason", 20, "slurmctld's reason for a drained or down node"},
    {"XIDs", 5, "XID events in the period"},
    {"ECCSBE", 6, "correctable (single-bit) ECC errors in the period"},
    {"ECCDBE", 6, "uncorrectable (double-bit) ECC errors in the period"},
    {"GPULost", 7, "GPUs that fell off the bus in the period"},
    {"Jobs", 6, "jobs that ran on the node in the period"},
    {"Failures", 8, "failed runs the node's own diagnosis covers"},
    {"InfraFail", 9, "of those, diagnosed as infrastructure (attributed to the node)"},
    {"Drains", 6, "times faultguard drained the node in the period"},
    {"LastHealth", 10, "the node's last pre-job health check up to the period's end: pass, or FAIL: why"},
    {"LastEvent", 19, "time of the node's last GPU event in the period"},
}};
constexpr std::array<std::string_view, 12> kDefaults = {"NodeName", "State",    "XIDs",     "ECCSBE",
                                                        "ECCDBE",   "GPULost",  "Jobs",     "Failures",
                                                        "InfraFail", "Drains",  "LastHealth", "Reason"};

}  // namespace

Table nodes_view(const Context& context) {
    Table table{"nodes", {kFields.begin(), kFields.end()}, {kDefaults.begin(), kDefaults.end()}, {}};
    std::vector<std::string> names = context.data.nodes;
    std::map<std::string, const SlurmNode*> slurm;
    if (context.slurm_nodes)
        for (const auto& n : *context.slurm_nodes) {
            slurm[n.name] = &n;
            names.push_back(n.name);
        }
    for (const auto& r : acct::aggregate_nodes(names, context.jobs, context.data.diagnoses, context.data.events,
                                              context.data.drains, context.data.last_health)) {
        const auto s = slurm.find(r.node);
        const SlurmNode* sn = s == slurm.end() ? nullptr : s->second;
        table.rows.push_back({text_cell(r.node), text_cell(sn ? sn->state : ""), text_cell(sn ? sn->reason : ""),
                              int_cell(r.xids), int_cell(r.ecc_sbe), int_cell(r.ecc_dbe), int_cell(r.gpu_lost),
                              int_cell(r.jobs), int_cell(r.failures), int_cell(r.infra_failures), int_cell(r.drains),
                              text_cell(r.last_health), r.last_event ? time_cell(*r.last_event) : Cell{}});
    }
    return table;
}

}  // namespace acme::gpuacct
