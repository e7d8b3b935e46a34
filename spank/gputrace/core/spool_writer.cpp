#include "spank/gputrace/core/spool_writer.hpp"

#include <algorithm>

namespace acme::telemetry {

void SpoolWriter::job_started(const JobInfo& job, double ts) {
    db_.transaction([&] {
        // A requeued job starts again under the same id: keep its row, refresh the start.
        db_.prepare(
               "INSERT INTO jobs (job_id, uid, gid, node, gpus, started_at, interval) VALUES (?, ?, ?, ?, ?, ?, ?) "
               "ON CONFLICT (job_id) DO UPDATE SET started_at = excluded.started_at, ended_at = NULL, "
               "gpus = excluded.gpus, interval = excluded.interval, telemetry_error = NULL")
            .bind_all(job.job_id, job.uid, job.gid, job.node, job.gpus, ts, job.interval)
            .run();
    });
}

void SpoolWriter::telemetry_error(long long job_id, const std::string& node, const std::string& message) {
    db_.transaction([&] {
        db_.prepare(
               "INSERT INTO jobs (job_id, node, telemetry_error) VALUES (?, ?, ?) "
               "ON CONFLICT (job_id) DO UPDATE SET telemetry_error = excluded.telemetry_error")
            .bind_all(job_id, node, message)
            .run();
    });
}

void SpoolWriter::write_samples(long long job_id, const std::vector<Sample>& samples) {
    if (samples.empty()) return;
    db_.transaction([&] {
        auto insert = db_.prepare(
            "INSERT INTO gpu_samples (job_id, gpu, ts, util_gpu, util_mem, mem_used, mem_total, power_mw, energy_mj, "
            "temp_c, sm_clock_mhz, throttle_reasons, ecc_corrected, ecc_uncorrected, retired_pending, remap_pending, "
            "remap_failure, gpm_sm_util, gpm_tensor_util, gpm_dram_bw_util) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        for (const auto& s : samples) {
            const auto& r = s.reading;
            insert
                .bind_all(job_id, s.gpu, s.ts, r.util_gpu, r.util_mem, r.mem_used, r.mem_total, r.power_mw,
                          r.energy_mj, r.temp_c, r.sm_clock_mhz, r.throttle_reasons, r.ecc_corrected,
                          r.ecc_uncorrected, r.retired_pending, r.remap_pending, r.remap_failure, r.gpm_sm_util,
                          r.gpm_tensor_util, r.gpm_dram_bw_util)
                .run();
            insert.reset();
        }
    });
}

void SpoolWriter::write_event(long long job_id, const GpuEvent& e) {
    db_.transaction([&] {
        db_.prepare("INSERT INTO gpu_events (job_id, gpu, ts, kind, code, detail) VALUES (?, ?, ?, ?, ?, ?)")
            .bind_all(job_id, e.gpu, e.ts, e.kind, e.code, e.detail)
            .run();
    });
}

void SpoolWriter::job_finished(long long job_id, const std::string& node,
                               const std::vector<nvml::Library::Device>& gpus, const std::vector<int>& requested,
                               double ts) {
    db_.transaction([&] {
        db_.prepare("UPDATE jobs SET ended_at = ? WHERE job_id = ?").bind_all(ts, job_id).run();
        db_.prepare("DELETE FROM gpu_summaries WHERE job_id = ?").bind(1, job_id).run();
        // Energy is the counter's last reading minus its first (better than integrating power);
        // the window functions pick them per GPU.
        auto summarise = db_.prepare(R"sql(
            INSERT INTO gpu_summaries (job_id, gpu, node, uuid, first_ts, last_ts, samples, util_avg, util_max,
                mem_max, mem_total, energy_mj, power_avg_mw, power_max_mw, temp_max, xids, ecc_uncorrected_delta,
                verdict)
            SELECT ?1, ?2, ?3, ?4, MIN(ts), MAX(ts), COUNT(*), AVG(util_gpu), MAX(util_gpu), MAX(mem_used),
                MAX(mem_total),
                (SELECT energy_mj FROM gpu_samples WHERE job_id = ?1 AND gpu = ?2 AND energy_mj IS NOT NULL
                   ORDER BY ts DESC LIMIT 1) -
                (SELECT energy_mj FROM gpu_samples WHERE job_id = ?1 AND gpu = ?2 AND energy_mj IS NOT NULL
                   ORDER BY ts ASC LIMIT 1),
                AVG(power_mw), MAX(power_mw), MAX(temp_c),
                (SELECT COUNT(*) FROM gpu_events WHERE job_id = ?1 AND gpu = ?2 AND kind = 'xid'),
                MAX(ecc_uncorrected) - MIN(ecc_uncorrected),
                CASE WHEN COUNT(util_gpu) = 0 THEN 'no-data'
                     WHEN MAX(util_gpu) <= ?5 THEN 'idle'
                     WHEN AVG(util_gpu) < ?6 THEN 'low-util'
                     ELSE 'ok' END
            FROM gpu_samples WHERE job_id = ?1 AND gpu = ?2)sql");
        for (int gpu : requested) {
            std::string uuid;
            for (const auto& d : gpus)
                if (d.minor == gpu) uuid = d.uuid;
            summarise.bind_all(job_id, gpu, node, uuid, kIdleMaxUtil, kLowUtilAvg).run();
            summarise.reset();
        }
    });
}

}  // namespace acme::telemetry
