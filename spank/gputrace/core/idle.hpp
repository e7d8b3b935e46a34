// Held-but-idle GPUs, live: the site's policy (gputrace plugstack keys idle_*, gputrace(8)) and
// the decision the sampler takes from each sample. A GPU is idle when its utilisation is at or
// below idle_util, or when NVML lists no process of the job on it (a job that holds a GPU and
// runs nothing there wastes it even if another job's process keeps it warm). Pure, so every
// rule is unit-tested without a GPU; acme-gpu-sampler (idle_watch.hpp) acts on the decision:
// alert (spool, Prometheus, stall_mail's mail path) and, at idle_cancel, cancel.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace acme::telemetry {

struct IdleConfig {
    double alert = 1800;   // s a GPU idles before the alert; 0: no alert (idle_alert)
    double cancel = 0;     // s every GPU of the job on the node idles before the cancel; 0: never
    double util = 5;       // % GPU utilisation at or below: idle
    // Jobs never judged (a debug or interactive partition, a QOS or account for visualisation).
    std::vector<std::string> exempt_partitions, exempt_qos, exempt_accounts;
    bool on() const { return alert > 0 || cancel > 0; }
};

// Sets one idle key (plugstack word or sampler argument). Returns false when `key` is not an
// idle key; a bad value appends one line to `errors` and keeps the default. Durations are
// minutes ("30", "0.5") or seconds with an s suffix ("90s"); "off" or 0 turns a limit off.
bool set_idle_key(std::string_view key, const std::string& value, IdleConfig& c, std::vector<std::string>& errors);
// The keys as words set_idle_key parses back ("idle_alert=1800s ...").
std::vector<std::string> idle_words(const IdleConfig& c);

// Why a job is exempt ("partition debug"), or nullopt when the policy applies to it. `qos`
// may be empty where slurmctld did not say.
std::optional<std::string> idle_exempt(const IdleConfig& c, std::string_view partition, std::string_view qos,
                                       std::string_view account);

// What one sample says of one GPU. `job_process`: whether NVML lists a process of the job on
// it; nullopt where NVML cannot tell (an old driver, a fake without the knob).
struct IdleSample {
    int gpu = 0;
    std::optional<double> util;
    std::optional<bool> job_process;
};

// Whether this sample shows the GPU held but idle; an unknown reading is never idle.
bool sample_idle(const IdleSample& s, const IdleConfig& c);

// What the sampler must do now.
struct IdleDecision {
    std::vector<int> alert;  // GPUs whose idle spell just passed idle_alert (once per spell)
    bool cancel = false;     // every GPU has idled idle_cancel (once per job)
    double idle_for = 0;     // s: the longest idle spell among the GPUs named (or all, on cancel)
};

// Follows the job's GPUs on one node.
class IdleTracker {
public:
    explicit IdleTracker(const IdleConfig& c) : c_(c) {}
    void on_sample(const IdleSample& s, double now);
    // Seconds the GPU has been idle (0: in use, or never sampled).
    double idle_for(int gpu, double now) const;
    // Whether the GPU's current idle spell passed idle_alert.
    bool alerted(int gpu) const;
    // The GPUs sampled so far, in order.
    std::vector<int> gpus() const;
    IdleDecision decide(double now);

private:
    struct Gpu {
        std::optional<double> idle_since;
        bool alerted = false;
    };
    const IdleConfig& c_;
    std::map<int, Gpu> gpus_;
    bool cancelled_ = false;
};

// The one-line reason the sampler logs and records (and the mail's subject carries):
// "GPUs 0,2 held but idle for 31 min (utilisation <= 5 %, or no process of the job)".
std::string idle_reason(const std::vector<int>& gpus, double idle_for, const IdleConfig& c);

// MailProg's argv for the alert, as stall_mail_argv's (stall.hpp): "Slurm Job_id=12 Name=train
// GPUs held but idle on n1: GPU 0 held but idle for 31 min (...)".
std::vector<std::string> idle_mail_argv(const std::string& mail_prog, const std::string& recipient, long long job_id,
                                        std::string_view job_name, std::string_view node, const std::string& reason);

}  // namespace acme::telemetry
