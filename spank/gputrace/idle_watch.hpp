// The sampler's held-but-idle watcher (acme-gpu-sampler, never slurmstepd): feeds each sample
// and NVML's process list of the job's GPUs to an IdleTracker (core/idle.hpp), and acts on its
// decision: at idle_alert it logs, records an idle_alert event per GPU in the spool (so the
// job's record and gpuacct carry it), and mails once through stall_mail's path (job_mail.hpp);
// at idle_cancel it records idle_cancel with the reason, logs it, and cancels the job. Jobs the
// site exempts (partition, QOS, account) are followed by nobody.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/store/database.hpp"
#include "spank/gputrace/core/idle.hpp"
#include "spank/gputrace/core/spool_writer.hpp"

namespace acme::telemetry {

class IdleWatch {
public:
    using Log = void (*)(const std::string&);
    // `mail`: stall_mail's setting (empty: no mail).
    IdleWatch(const IdleConfig& c, std::string mail, long long job, std::string node, store::Database& db, Log log);
    // NVML's compute process list per GPU (minor number); absent or nullopt: unknown.
    using Processes = std::map<int, std::optional<std::vector<unsigned>>>;
    // One tick's samples and process lists. Asks slurmctld, mails and cancels: never call it
    // with the NVML watchdog armed.
    void on_samples(const std::vector<Sample>& samples, const Processes& processes, double now);
    // For the Prometheus series: nullopt while the job is exempt or not yet known.
    std::optional<double> idle_seconds(int gpu, double now) const;
    bool alerted(int gpu) const { return tracker_.alerted(gpu); }

private:
    void ask_slurmctld(double now);
    void alert(const IdleDecision& d, double now);
    void cancel(const IdleDecision& d, double now);
    void record(const std::vector<int>& gpus, const char* kind, double idle_for, const std::string& detail, double now);
    const IdleConfig& c_;
    std::string mail_;
    long long job_;
    std::string node_;
    SpoolWriter writer_;
    Log log_;
    IdleTracker tracker_;
    bool known_ = false, exempt_ = false, mailed_ = false;
    double next_ask_ = 0;
    std::string job_name_, job_user_, mail_user_;
};

}  // namespace acme::telemetry
