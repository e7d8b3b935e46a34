#include "common/store/spool_gpu.hpp"

#include <iterator>

#include <fmt/format.h>

#include "common/store/columns.hpp"

namespace acme::store {

void insert_gpu_samples(Database& db, long long job_id, const std::vector<GpuSampleRow>& samples) {
    if (samples.empty()) return;
    db.transaction([&] {
        auto insert = db.prepare(
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

void insert_gpu_event(Database& db, long long job_id, const GpuEventRow& e) {
    db.transaction([&] {
        db.prepare("INSERT INTO gpu_events (job_id, gpu, ts, kind, code, detail) VALUES (?, ?, ?, ?, ?, ?)")
            .bind_all(job_id, e.gpu, e.ts, e.kind, e.code, e.detail)
            .run();
    });
}

namespace {

std::vector<GpuEventRow> events(Statement& q) {
    std::vector<GpuEventRow> out;
    while (q.step()) {
        GpuEventRow e;
        e.gpu = static_cast<int>(q.column_int(0));
        e.ts = q.column_double(1);
        e.kind = q.column_text(2);
        e.code = q.column_optional_int(3);
        e.detail = q.column_optional_text(4).value_or("");
        out.push_back(std::move(e));
    }
    return out;
}

}  // namespace

std::vector<GpuEventRow> job_gpu_events(Database& db, long long job_id) {
    auto q = db.prepare("SELECT gpu, ts, kind, code, detail FROM gpu_events WHERE job_id = ? ORDER BY ts");
    q.bind_all(job_id);
    return events(q);
}

std::vector<GpuEventRow> xids_since_last_health_check(Database& db) {
    auto q = db.prepare(
        "SELECT gpu, ts, kind, code, detail FROM gpu_events WHERE kind = 'xid' AND "
        "ts > COALESCE((SELECT MAX(ts) FROM health_checks), 0) ORDER BY ts");
    return events(q);
}

void finish_job_gpus(Database& db, long long job_id, const std::string& node, double ts,
                     const std::vector<std::pair<int, std::string>>& gpus, double idle_max_util, double low_util_avg) {
    db.transaction([&] {
        db.prepare("UPDATE jobs SET ended_at = ? WHERE job_id = ?").bind_all(ts, job_id).run();
        db.prepare("DELETE FROM gpu_summaries WHERE job_id = ?").bind(1, job_id).run();
        // Energy is the counter's last reading minus its first (better than integrating power);
        // the subqueries pick them per GPU.
        auto summarise = db.prepare(R"sql(
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
        for (const auto& [gpu, uuid] : gpus) {
            summarise.bind_all(job_id, gpu, node, uuid, idle_max_util, low_util_avg).run();
            summarise.reset();
        }
    });
}

namespace {

using S = GpuSummary;

const Column<GpuSummary> kSummaryColumns[] = {
    field<S, &S::job_id>("job_id"),
    field<S, &S::node>("node"),
    field<S, &S::gpu>("gpu"),
    field<S, &S::uuid>("uuid"),
    field<S, &S::samples>("samples"),
    field<S, &S::util_avg>("util_avg"),
    field<S, &S::util_max>("util_max"),
    field<S, &S::mem_max>("mem_max"),
    field<S, &S::mem_total>("mem_total"),
    field<S, &S::energy_mj>("energy_mj"),
    field<S, &S::power_avg_mw>("power_avg_mw"),
    field<S, &S::power_max_mw>("power_max_mw"),
    field<S, &S::temp_max>("temp_max"),
    field<S, &S::xids>("xids"),
    field<S, &S::ecc_uncorrected>("ecc_uncorrected_delta"),
    field<S, &S::verdict>("verdict"),
};

// GPM (Hopper and later) only where the sampler read it: NULL otherwise. After the table's
// columns, on gpu_summaries aliased s.
const Column<GpuSummary> kGpmColumns[] = {
    field<S, &S::gpm_sm_avg>("(SELECT AVG(gpm_sm_util) FROM gpu_samples g WHERE g.job_id = s.job_id AND g.gpu = s.gpu)"),
    field<S, &S::gpm_tensor_avg>(
        "(SELECT AVG(gpm_tensor_util) FROM gpu_samples g WHERE g.job_id = s.job_id AND g.gpu = s.gpu)"),
    field<S, &S::gpm_dram_bw_avg>(
        "(SELECT AVG(gpm_dram_bw_util) FROM gpu_samples g WHERE g.job_id = s.job_id AND g.gpu = s.gpu)"),
};

}  // namespace

std::string gpu_summary_columns() { return select_list(kSummaryColumns); }

GpuSummary read_gpu_summary(const Statement& q) { return read_row(kSummaryColumns, q); }

std::vector<GpuSummary> job_gpu_summaries(Database& db, long long job_id) {
    auto q = db.prepare(fmt::format("SELECT {}, {} FROM gpu_summaries s WHERE job_id = ? ORDER BY gpu",
                                    gpu_summary_columns(), select_list(kGpmColumns)));
    q.bind(1, job_id);
    std::vector<GpuSummary> out;
    while (q.step()) {
        GpuSummary r = read_gpu_summary(q);
        read_into(kGpmColumns, q, r, static_cast<int>(std::size(kSummaryColumns)));
        out.push_back(std::move(r));
    }
    return out;
}

}  // namespace acme::store
