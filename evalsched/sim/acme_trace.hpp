// Background load drawn from the AcmeTrace distributions: the GPU jobs of Acme's Seren cluster
// (Hu et al., "Characterization of Large Language Model Development in the Datacenter",
// NSDI'24; data InternLM/AcmeTrace, CC BY 4.0). The tables are the Seren rows of
// derived/gpu_num_cdf.csv and derived/gpu_job_duration_cdf.csv in shared/data/acmetrace,
// read back from the paper's figures; they are embedded so the simulator needs no data path.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace acme::evalsched::sim {

struct BackgroundJob {
    double arrival = 0;
    int nodes = 1;          // > 1: whole nodes, as Slurm places jobs wider than a node
    int gpus_per_node = 1;
    double duration = 0;    // what it really runs
    double time_limit = 0;  // what its user asked for
};

struct BackgroundOptions {
    int nodes = 4;
    int gpus_per_node = 8;
    double load = 0.5;               // offered GPU load, fraction of the cluster
    double max_duration = 3 * 86400; // the partition's MaxTime: longer trace jobs are cut here
};

// GPUs of one job: Seren's job-count CDF over 1, 2, 4, ... 1024 GPUs, conditioned on fitting
// the cluster (a 1-node cluster never sees a 64-GPU job).
int sample_gpus(std::mt19937_64& rng, int cluster_gpus);
// Run time of one job: Seren's duration CDF, interpolated log-linearly between its points.
double sample_duration(std::mt19937_64& rng, double max_duration);

// Poisson arrivals over [begin, end) at the rate that offers `load` of the cluster's GPUs.
std::vector<BackgroundJob> background_jobs(const BackgroundOptions& options, double begin, double end, std::uint64_t seed);

}  // namespace acme::evalsched::sim
