#include "spank/gputrace/core/spool_writer.hpp"

#include <utility>

#include "common/store/spool_jobs.hpp"

namespace acme::telemetry {

void SpoolWriter::job_started(const JobInfo& job, double ts) {
    store::record_sampling_started(db_, job.job_id, job.uid, job.gid, job.node, job.gpus, ts, job.interval, job.sluid);
}

void SpoolWriter::telemetry_error(long long job_id, const std::string& node, const std::string& message) {
    store::record_telemetry_error(db_, job_id, node, message);
}

void SpoolWriter::write_samples(long long job_id, const std::vector<Sample>& samples) {
    store::insert_gpu_samples(db_, job_id, samples);
}

void SpoolWriter::write_event(long long job_id, const GpuEvent& e) {
    store::insert_gpu_event(db_, job_id, {e.gpu, e.ts, e.kind, e.code, e.detail});
}

void SpoolWriter::job_finished(long long job_id, const std::string& node,
                               const std::vector<nvml::Library::Device>& gpus, const std::vector<int>& requested,
                               double ts) {
    std::vector<std::pair<int, std::string>> with_uuid;
    for (int gpu : requested) {
        std::string uuid;
        for (const auto& d : gpus)
            if (d.minor == gpu) uuid = d.uuid;
        with_uuid.emplace_back(gpu, std::move(uuid));
    }
    store::finish_job_gpus(db_, job_id, node, ts, with_uuid, kIdleMaxUtil, kLowUtilAvg);
}

}  // namespace acme::telemetry
