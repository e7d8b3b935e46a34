// What the HTML report draws, computed here rather than in the page: fixed-size aggregates
// whatever the number of jobs (a million jobs' rows would make a page no browser opens).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "acct/gpuacct/core/spool_rows.hpp"

namespace acme::acct {

// Jobs of one type by their mean GPU utilisation (whole percent), weighted by GPU-hours: the
// share of the type's GPU time spent at each level, which is what capacity is lost to.
struct UtilHistogram {
    std::string type;
    std::int64_t jobs = 0;
    double gpu_hours = 0;
    std::array<double, 101> gpu_hours_at{};  // index: mean utilisation, rounded down to a percent
};
std::vector<UtilHistogram> util_by_type(std::span<const Job> jobs, std::span<const GpuSummary> summaries, double now);

// GPU time a user (or an account) held on GPUs that were idle or barely used, from each GPU's
// verdict (spool_gpu.hpp's thresholds): the "who is wasting GPUs" table.
struct WasteRow {
    std::string name;
    std::int64_t jobs = 0;
    double gpu_hours = 0, idle_gpu_hours = 0, low_gpu_hours = 0;
};
enum class WasteKey { user, account };
// The top `top` by idle plus low-utilisation GPU-hours, then by name.
std::vector<WasteRow> waste_by(WasteKey key, std::span<const Job> jobs, std::span<const GpuSummary> summaries,
                               double now, std::size_t top);

// XID events per node in `buckets` equal slices of the report's period [from, to] (0: open,
// then the first or last event), with their codes.
struct XidBucket {
    std::string node;
    int bucket = 0;
    std::int64_t count = 0;
    std::map<std::int64_t, std::int64_t> codes;  // XID code -> events
};
struct XidCode {
    std::int64_t code = 0, count = 0;
    std::vector<std::string> nodes;  // sorted
};
struct XidSummary {
    double from = 0, to = 0;
    int buckets = 0;
    std::vector<XidBucket> cells;  // by node, then bucket
    std::vector<XidCode> codes;    // by count, most first
};
XidSummary xid_summary(std::span<const GpuEvent> events, double from, double to, int buckets);

}  // namespace acme::acct
