#include "common/store/spool_jobs.hpp"

#include "common/store/spool_reuse.hpp"

namespace acme::store {

void upsert_job_record(Database& db, const SpoolJobRow& r) {
    auto opt_text = [](const std::string& s) { return s.empty() ? std::optional<std::string>() : std::optional(s); };
    auto opt_time = [](double t) { return t > 0 ? std::optional(t) : std::optional<double>(); };
    retire_reused_job_id(db, r.job_id, r.sluid, r.start_time);
    db.transaction([&] {
        db.prepare(R"sql(
            INSERT INTO jobs (job_id, uid, gid, node, gpus, user, account, partition, name, job_type, job_type_source,
                nodelist, num_nodes, gpus_total, submit_time, start_time, end_time, state, exit_code,
                derived_exit_code, restarts, batch_host, sluid)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23)
            ON CONFLICT (job_id) DO UPDATE SET uid = excluded.uid, gid = excluded.gid,
                gpus = COALESCE(excluded.gpus, jobs.gpus), user = excluded.user, account = excluded.account,
                partition = excluded.partition, name = excluded.name, job_type = excluded.job_type,
                job_type_source = excluded.job_type_source, nodelist = excluded.nodelist,
                num_nodes = excluded.num_nodes, gpus_total = excluded.gpus_total,
                submit_time = excluded.submit_time, start_time = excluded.start_time,
                end_time = excluded.end_time, state = excluded.state, exit_code = excluded.exit_code,
                derived_exit_code = excluded.derived_exit_code, restarts = excluded.restarts,
                batch_host = excluded.batch_host, sluid = COALESCE(excluded.sluid, jobs.sluid))sql")
            .bind_all(r.job_id, r.uid, r.gid, r.node, opt_text(r.gpus), opt_text(r.user), opt_text(r.account),
                      opt_text(r.partition), opt_text(r.name), r.job_type, r.job_type_source, opt_text(r.nodelist),
                      r.num_nodes, r.gpus_total, opt_time(r.submit_time), opt_time(r.start_time), opt_time(r.end_time),
                      opt_text(r.state), opt_text(r.exit_code), opt_text(r.derived_exit_code), r.restarts,
                      opt_text(r.batch_host), opt_text(r.sluid))
            .run();
    });
}

void record_sampling_started(Database& db, long long job_id, long long uid, long long gid, const std::string& node,
                             const std::string& gpus, double ts, double interval, const std::string& sluid) {
    // The sampler starts with the job: every row of the id from before now is an older job's.
    retire_reused_job_id(db, job_id, sluid, ts);
    db.transaction([&] {
        db.prepare(
              "INSERT INTO jobs (job_id, uid, gid, node, gpus, started_at, interval, sluid) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
              "ON CONFLICT (job_id) DO UPDATE SET started_at = excluded.started_at, ended_at = NULL, "
              "gpus = excluded.gpus, interval = excluded.interval, telemetry_error = NULL, "
              "sluid = COALESCE(excluded.sluid, jobs.sluid)")
            .bind_all(job_id, uid, gid, node, gpus, ts, interval,
                      sluid.empty() ? std::optional<std::string>() : std::optional(sluid))
            .run();
    });
}

void record_telemetry_error(Database& db, long long job_id, const std::string& node, const std::string& message) {
    db.transaction([&] {
        db.prepare(
              "INSERT INTO jobs (job_id, node, telemetry_error) VALUES (?, ?, ?) "
              "ON CONFLICT (job_id) DO UPDATE SET telemetry_error = excluded.telemetry_error")
            .bind_all(job_id, node, message)
            .run();
    });
}

std::optional<std::string> job_gpus(Database& db, long long job_id) {
    auto q = db.prepare("SELECT gpus FROM jobs WHERE job_id = ?");
    q.bind_all(job_id);
    if (!q.step()) return std::nullopt;
    return q.column_optional_text(0).value_or("");
}

}  // namespace acme::store
