// libFuzzer: gpuacct's parser of Prometheus' /api/v1/query answers (a site's Prometheus, or
// whatever answers at the URL a user gave). Input: a selector byte (which Stat the answer is
// for), then the body. Properties: no crash, no UB; an error is one line and adds no row; every
// row is of a job asked about, has a node, a GPU id >= 0, and a verdict of the four.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "acct/gpuacct/core/prometheus_source.hpp"

using acme::acct::prometheus::Collector;
using acme::acct::prometheus::Stat;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const auto stat = static_cast<Stat>(data[0] % (static_cast<int>(Stat::ecc) + 1));
    const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
    const std::int64_t jobs[] = {7, 8};
    Collector c(jobs);
    const std::string error = c.add(stat, body);
    if (error.find('\n') != std::string::npos) __builtin_trap();
    const auto rows = c.summaries();
    if (!error.empty() && !rows.empty()) __builtin_trap();
    for (const auto& r : rows) {
        if ((r.job_id != 7 && r.job_id != 8) || r.node.empty() || r.gpu < 0 || !r.so_far) __builtin_trap();
        if (r.verdict != "ok" && r.verdict != "idle" && r.verdict != "low-util" && r.verdict != "no-data") __builtin_trap();
    }
    return 0;
}
