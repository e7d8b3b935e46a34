// --failures: failed runs by category and reason over the period, in the paper's Table 3
// order, with the GPU demand and GPU time they cost and how soon they failed.
#include <array>

#include "acct/gpuacct/views.hpp"

namespace acme::gpuacct {
namespace {

constexpr std::array<Field, 7> kFields = {{
    {"Category", -14, "infrastructure, framework, script, unknown"},
    {"Reason", -22, "failure reason (faultdiag --reasons)"},
    {"Num", 6, "failed runs (each run of a requeued job counts)"},
    {"GPUDemand", 9, "mean GPUs of a failed run"},
    {"GPUHours", 10, "GPU time of the failed runs, hours"},
    {"GPUTimePct", 10, "share of all failed runs' GPU time, percent"},
    {"TTFMedian", 10, "median time to failure: run start to failure, [DD-]HH:MM:SS"},
}};
constexpr std::array<std::string_view, 7> kDefaults = {"Category",  "Reason",     "Num",      "GPUDemand",
                                                       "GPUHours", "GPUTimePct", "TTFMedian"};

}  // namespace

Table failures_view(const Context& context) {
    Table table{"failures", {kFields.begin(), kFields.end()}, {kDefaults.begin(), kDefaults.end()}, {}};
    const auto rows = context.failures ? *context.failures
                                       : acct::aggregate_failures(context.jobs, context.data.diagnoses, context.now);
    for (const auto& f : rows) {
        table.rows.push_back({text_cell(f.category), text_cell(f.reason), int_cell(f.num), real_cell(f.gpu_demand, 1),
                              real_cell(f.gpu_hours, 2), real_cell(f.gpu_time_pct, 2), elapsed_cell(f.ttf_median_s)});
    }
    return table;
}

}  // namespace acme::gpuacct
