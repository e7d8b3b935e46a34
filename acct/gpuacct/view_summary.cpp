// --summary: the paper's workload characterization for the period, one table: all GPU jobs,
// then by job type, by final state (shares by count and by GPU time), by GPU count.
#include <array>

#include "acct/gpuacct/views.hpp"

namespace acme::gpuacct {
namespace {

constexpr std::array<Field, 9> kFields = {{
    {"Group", -6, "all, type, state, gpus"},
    {"Value", -13, "the type, state or GPU-count bucket (1, 2-4, 5-8, 9-64, 65-256, 257+)"},
    {"Jobs", 8, "GPU jobs"},
    {"JobsPct", 7, "share of the GPU jobs, percent"},
    {"GPUHours", 10, "GPU time, hours"},
    {"GPUTimePct", 10, "share of the GPU time, percent"},
    {"DurMedian", 11, "median run time, [DD-]HH:MM:SS"},
    {"QueueMedian", 11, "median time queued, [DD-]HH:MM:SS"},
    {"GPUsMedian", 10, "median GPUs per job"},
}};

}  // namespace

Table summary_view(const Context& context) {
    Table table{"summary", {kFields.begin(), kFields.end()}, {}, {}};
    for (const auto& f : kFields) table.defaults.push_back(f.name);
    const auto rows = context.summary ? *context.summary : acct::aggregate_summary(context.jobs, context.now);
    for (const auto& r : rows) {
        table.rows.push_back({text_cell(r.dimension), text_cell(r.value), int_cell(r.jobs), real_cell(r.jobs_pct, 1),
                              real_cell(r.gpu_hours, 2), real_cell(r.gpu_time_pct, 1), elapsed_cell(r.duration_median_s),
                              elapsed_cell(r.queue_median_s), real_cell(r.gpus_median, 1)});
    }
    return table;
}

}  // namespace acme::gpuacct
