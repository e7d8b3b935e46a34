// Writes a synthetic node spool for tests/bench/gpuacct: N jobs (default 1,000,000, the size of
// Acme's Seren trace) over six months ending at --end, their per-GPU summaries and a diagnosis
// for each failed job. Shapes follow the AcmeTrace summaries (InternLM/AcmeTrace, CC BY 4.0,
// Hu et al., "Characterization of Large Language Model Development in the Datacenter", NSDI
// '24): job-type shares (derived/job_type_share.csv, Seren), state rates, median run time
// 122 s and median queueing 1 s, median 1 GPU and mean 5.7 GPUs (data/cluster_summary.csv).
// What gpuacct goodput reads besides (the trace records no requeues nor hangs, so these are the
// bench's assumptions, drawn from a second generator so that the jobs above stay as they were):
// pretraining and multimodal jobs (the long ones, run with --auto-recover) were requeued after
// an infrastructure fault with chance 0.3 per run (at most 5 times), each earlier run diagnosed
// with an infrastructure reason in Table 3's proportions; a job failed for nccl_timeout (a hang)
// has the sampler's stall verdict, acted on, 30 minutes before its end; 0.1 % of completed jobs
// have a verdict withdrawn (a long checkpoint pause). Idle GPUs: util below 1 %, as drawn above.
// Deterministic for a seed, so two runs time the same file.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include <fmt/format.h>

#include "common/diagnose/taxonomy.hpp"
#include "common/store/spool.hpp"

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: gpuacct-spool-gen FILE END_EPOCH [JOBS] [SEED]\n");
        return 2;
    }
    const std::string path = argv[1];
    const double end = std::atof(argv[2]);
    const long jobs = argc > 3 ? std::atol(argv[3]) : 1000000;
    const unsigned seed = argc > 4 ? static_cast<unsigned>(std::atol(argv[4])) : 42;
    const double six_months = 182.0 * 86400;

    auto db = acme::store::open_spool(path);
    db.exec("PRAGMA synchronous = OFF");
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> uniform(0, 1);
    // Seren's job-type shares by count.
    std::discrete_distribution<int> type_of({64.851, 0.893, 14.863, 2.949, 1.880, 14.564});
    const char* types[] = {"eval", "pretrain", "sft", "mllm", "debug", "other"};
    // GPU counts: median 1, mean about 5.7 (a few large pretraining jobs carry the mean).
    std::discrete_distribution<int> gpus_of({66, 10, 12, 8, 2.5, 1, 0.4, 0.1});
    const int gpu_counts[] = {1, 2, 4, 8, 16, 64, 256, 1024};
    // Run time: log-normal around Seren's 122 s median; pretraining runs much longer.
    std::lognormal_distribution<double> run_s(std::log(122.0), 2.0);
    std::exponential_distribution<double> queue_s(1.0 / 60);
    // Failure reasons weighted by Table 3's counts (paper order, the taxonomy's names).
    std::vector<const acme::diagnose::ReasonInfo*> reasons;
    std::vector<double> weights;
    const std::pair<const char*, double> table3[] = {
        {"nvlink_error", 54},  {"cuda_error", 21},      {"node_failure", 16},    {"ecc_error", 12},
        {"network_error", 12}, {"connection_error", 147}, {"storage_error", 10}, {"nccl_timeout", 6},
        {"nccl_remote_error", 3}, {"dataloader_killed", 6}, {"attribute_error", 67}, {"out_of_memory", 14},
        {"runtime_error", 65}, {"assertion_error", 105}, {"value_error", 33},   {"zero_division", 5},
        {"model_loading_error", 104}, {"dataset_loading_error", 5}, {"file_not_found", 568}, {"os_error", 266},
        {"type_error", 620},   {"name_error", 18},      {"permission_error", 7}, {"import_error", 111},
        {"key_error", 260}};
    for (const auto& [name, w] : table3) {
        reasons.push_back(acme::diagnose::find_reason(name));
        weights.push_back(w);
    }
    std::discrete_distribution<size_t> reason_of(weights.begin(), weights.end());
    std::vector<double> infra_weights;
    for (size_t k = 0; k < reasons.size(); ++k)
        infra_weights.push_back(reasons[k]->category == acme::diagnose::Category::infrastructure ? weights[k] : 0);
    std::discrete_distribution<size_t> infra_reason_of(infra_weights.begin(), infra_weights.end());
    std::mt19937_64 requeue_rng(seed ^ 0x9e3779b97f4a7c15ULL);

    auto insert_job = db.prepare(R"sql(INSERT INTO jobs (job_id, uid, gid, node, gpus, user, account, partition, name,
        job_type, job_type_source, nodelist, num_nodes, gpus_total, submit_time, start_time, end_time, state,
        exit_code, derived_exit_code, restarts, batch_host)
        VALUES (?, ?, ?, 'bench', ?, ?, 'acme', 'gpu', ?, ?, 'name', 'bench', ?, ?, ?, ?, ?, ?, ?, '0:0', ?, 'bench'))sql");
    auto insert_gpu = db.prepare(R"sql(INSERT INTO gpu_summaries (job_id, gpu, node, samples, util_avg, util_max,
        mem_max, mem_total, energy_mj, power_avg_mw, power_max_mw, temp_max, xids, verdict)
        VALUES (?, ?, 'bench', ?, ?, ?, ?, 85899345920, ?, ?, 700000, 70, 0, ?))sql");
    auto insert_diag = db.prepare(R"sql(INSERT INTO diagnoses (job_id, restart, node, ts, category, reason, confidence,
        evidence, action, rule) VALUES (?, ?, 'bench', ?, ?, ?, 0.9, '[]', ?, 'bench'))sql");
    auto insert_stall = db.prepare(R"sql(INSERT INTO stalls (job_id, restart, node, ts, since, named_node, hardware,
        evidence, action, withdrawn) VALUES (?, ?, 'bench', ?, ?, NULL, 0, 'no progress', ?, ?))sql");
    db.exec("BEGIN");
    for (long i = 1; i <= jobs; ++i) {
        const int type = type_of(rng);
        const int gpus = gpu_counts[gpus_of(rng)];
        const double submit = end - six_months + uniform(rng) * six_months;
        const double start = submit + queue_s(rng);
        const double run = std::min(run_s(rng) * (type == 1 ? 20 : 1), 14 * 86400.0);
        const double r = uniform(rng);
        const char* state = r < 0.497 ? "COMPLETED" : r < 0.572 ? "CANCELLED" : "FAILED";
        int restarts = 0;
        if (type == 1 || type == 3)
            while (restarts < 5 && uniform(requeue_rng) < 0.3) ++restarts;
        const std::string ids = gpus == 1 ? "0" : gpus == 2 ? "0,1" : gpus == 4 ? "0,1,2,3" : "0,1,2,3,4,5,6,7";
        insert_job
            .bind_all(i, 1000 + i % 200, 1000, ids, fmt::format("user{}", i % 200), fmt::format("{}-{}", types[type], i % 97),
                      types[type], std::max(1, gpus / 8), gpus, submit, start, start + run, state,
                      state[0] == 'F' ? "1:0" : state[0] == 'C' && state[1] == 'A' ? "0:15" : "0:0", restarts)
            .run();
        insert_job.reset();
        // This node's GPUs of the job (at most 8), each with its summary.
        const double util = uniform(rng) * 100;
        for (int g = 0; g < std::min(gpus, 8); ++g) {
            const double u = std::min(100.0, util * (0.9 + 0.2 * uniform(rng)));
            insert_gpu
                .bind_all(i, g, static_cast<long>(run / 10) + 1, u, std::min(100.0, u + 10), static_cast<long long>(u * 8e8),
                          static_cast<long long>(run * 300 * 1000), 100000 + u * 5000,
                          u < 1 ? "idle" : u < 30 ? "low-util" : "ok")
                .run();
            insert_gpu.reset();
        }
        // The earlier runs' faults, before the newest run's submission (Slurm's requeue time).
        for (int k = 0; k < restarts; ++k) {
            const auto* reason = reasons[infra_reason_of(requeue_rng)];
            insert_diag
                .bind_all(i, k, submit - (restarts - k) * 3600.0 * (1 + uniform(requeue_rng)),
                          acme::diagnose::to_string(reason->category), reason->name, acme::diagnose::to_string(reason->action))
                .run();
            insert_diag.reset();
        }
        if (state[0] == 'F') {
            const auto* reason = reasons[reason_of(rng)];
            insert_diag
                .bind_all(i, restarts, start + run, acme::diagnose::to_string(reason->category), reason->name,
                          acme::diagnose::to_string(reason->action))
                .run();
            insert_diag.reset();
            if (reason->name == std::string_view("nccl_timeout")) {
                insert_stall.bind_all(i, restarts, start + run, std::max(start, start + run - 1800), "cancelled", 0).run();
                insert_stall.reset();
            }
        } else if (state[0] == 'C' && state[1] == 'O' && uniform(requeue_rng) < 0.001) {
            insert_stall.bind_all(i, restarts, start + run / 2, start + run / 4, "none", 1).run();
            insert_stall.reset();
        }
        if (i % 100000 == 0) {
            db.exec("COMMIT");
            db.exec("BEGIN");
        }
    }
    db.exec("COMMIT");
    std::printf("gpuacct-spool-gen: %ld jobs in %s\n", jobs, path.c_str());
    return 0;
}
