#include "evalsched/sim/acme_trace.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace acme::evalsched::sim {
namespace {

// derived/gpu_num_cdf.csv, cluster Seren: cdf_jobs_pct at gpu_num_le = 2^i.
constexpr std::array<double, 11> kSerenGpuCdf = {54.04, 65.43, 67.95, 96.75, 97.86, 98.82, 99.32, 99.55, 99.73, 99.82, 100.00};
// derived/gpu_job_duration_cdf.csv, cluster Seren: cdf_pct at seconds_le = 2^i, i = 0..21.
constexpr std::array<double, 22> kSerenDurationCdf = {2.18,  2.78,  5.62,  11.76, 23.38, 31.71, 37.12, 48.91,
                                                      65.63, 79.21, 88.03, 92.94, 95.99, 97.53, 98.44, 99.19,
                                                      99.64, 99.83, 99.93, 99.98, 100.00, 100.00};

}  // namespace

int sample_gpus(std::mt19937_64& rng, int cluster_gpus) {
    // Largest power of two that fits; the CDF is renormalised to it.
    int top = 0;
    while (top + 1 < static_cast<int>(kSerenGpuCdf.size()) && (1 << (top + 1)) <= cluster_gpus) ++top;
    std::uniform_real_distribution<double> u(0, kSerenGpuCdf[static_cast<std::size_t>(top)]);
    const double x = u(rng);
    for (int i = 0; i <= top; ++i)
        if (x <= kSerenGpuCdf[static_cast<std::size_t>(i)]) return 1 << i;
    return 1 << top;
}

double sample_duration(std::mt19937_64& rng, double max_duration) {
    std::uniform_real_distribution<double> u(0, 100);
    const double x = u(rng);
    double lo_cdf = 0, lo_s = 0.5;  // below the first point: between 0.5 s and 1 s
    for (std::size_t i = 0; i < kSerenDurationCdf.size(); ++i) {
        const double hi_cdf = kSerenDurationCdf[i];
        const double hi_s = std::ldexp(1.0, static_cast<int>(i));
        if (x <= hi_cdf) {
            const double f = hi_cdf > lo_cdf ? (x - lo_cdf) / (hi_cdf - lo_cdf) : 1;
            return std::min(max_duration, std::exp(std::log(lo_s) + f * (std::log(hi_s) - std::log(lo_s))));
        }
        lo_cdf = hi_cdf, lo_s = hi_s;
    }
    return max_duration;
}

std::vector<BackgroundJob> background_jobs(const BackgroundOptions& o, double begin, double end, std::uint64_t seed) {
    std::vector<BackgroundJob> jobs;
    if (o.load <= 0) return jobs;
    const int cluster = o.nodes * o.gpus_per_node;
    std::mt19937_64 rng(seed ^ 0x5eedacbeULL);
    // The arrival rate that offers `load`: the mean GPU-seconds of a job, by Monte Carlo over
    // the same conditioned distributions (the tail is heavy, so no closed form is honest).
    double mean_work = 0;
    constexpr int kProbe = 50000;
    for (int i = 0; i < kProbe; ++i) {
        const int g = sample_gpus(rng, cluster);
        const int nodes = (g + o.gpus_per_node - 1) / o.gpus_per_node;
        mean_work += (nodes > 1 ? nodes * o.gpus_per_node : g) * sample_duration(rng, o.max_duration);
    }
    mean_work /= kProbe;
    const double rate = o.load * cluster / mean_work;
    std::exponential_distribution<double> gap(rate);
    // Users over-ask: a limit of 1.2x-3x the run time plus ten minutes, capped at MaxTime.
    std::uniform_real_distribution<double> overask(1.2, 3.0);
    for (double t = begin + gap(rng); t < end; t += gap(rng)) {
        BackgroundJob j;
        j.arrival = t;
        const int g = sample_gpus(rng, cluster);
        j.nodes = (g + o.gpus_per_node - 1) / o.gpus_per_node;
        j.gpus_per_node = j.nodes > 1 ? o.gpus_per_node : g;
        j.duration = sample_duration(rng, o.max_duration);
        j.time_limit = std::min(o.max_duration, std::ceil((j.duration * overask(rng) + 600) / 60) * 60);
        jobs.push_back(j);
    }
    return jobs;
}

}  // namespace acme::evalsched::sim
