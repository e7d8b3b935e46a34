// Node spools for the gpuacct and acct tests, written through the real schema.
#pragma once

#include <string>

#include "common/store/spool.hpp"

namespace acme::test {

struct JobSpec {
    // Every member has a default: tests name only what matters to them (designated initializers).
    long long id = 0;
    std::string node = "n1", gpus = "", user = "alice", name = "train", type = "pretrain", state = "COMPLETED";
    int gpus_total = 0, num_nodes = 1, restarts = 0;
    double submit = 0, start = 0, end = 0;
    std::string exit_code = "0:0", batch_host = "";
};

inline void add_job(store::Database& db, const JobSpec& j) {
    db.prepare(R"sql(INSERT INTO jobs (job_id, uid, gid, node, gpus, user, account, partition, name, job_type,
        job_type_source, nodelist, num_nodes, gpus_total, submit_time, start_time, end_time, state, exit_code,
        derived_exit_code, restarts, batch_host) VALUES (?, 1000, 1000, ?, ?, ?, 'proj', 'gpu', ?, ?, 'tag', ?, ?, ?,
        ?, ?, ?, ?, ?, '0:0', ?, ?))sql")
        .bind_all(j.id, j.node, j.gpus, j.user, j.name, j.type, j.batch_host.empty() ? j.node : j.batch_host,
                  j.num_nodes, j.gpus_total, j.submit, j.start, j.end, j.state, j.exit_code, j.restarts,
                  j.batch_host.empty() ? j.node : j.batch_host)
        .run();
}

inline void add_gpu(store::Database& db, long long job, const std::string& node, int gpu, double util_avg,
                    double util_max, long long mem_max, const std::string& verdict, long long energy_mj = 3600000) {
    db.prepare(R"sql(INSERT INTO gpu_summaries (job_id, gpu, node, samples, util_avg, util_max, mem_max, mem_total,
        energy_mj, power_avg_mw, power_max_mw, temp_max, xids, verdict) VALUES (?, ?, ?, 10, ?, ?, ?, 85899345920, ?,
        300000, 400000, 70, 0, ?))sql")
        .bind_all(job, gpu, node, util_avg, util_max, mem_max, energy_mj, verdict)
        .run();
}

inline void add_diagnosis(store::Database& db, long long job, int restart, const std::string& node, double ts,
                          const std::string& category, const std::string& reason, double confidence = 0.9) {
    db.prepare(R"sql(INSERT INTO diagnoses (job_id, restart, node, ts, category, reason, confidence, evidence, action)
        VALUES (?, ?, ?, ?, ?, ?, ?, '[]', 'none'))sql")
        .bind_all(job, restart, node, ts, category, reason, confidence)
        .run();
}

inline void add_event(store::Database& db, long long job, int gpu, double ts, const std::string& kind, int code) {
    db.prepare("INSERT INTO gpu_events (job_id, gpu, ts, kind, code) VALUES (?, ?, ?, ?, ?)")
        .bind_all(job, gpu, ts, kind, code)
        .run();
}

}  // namespace acme::test
