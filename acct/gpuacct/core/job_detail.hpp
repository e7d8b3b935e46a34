// gpuacct -j ID --detail (and -l): one job as Princeton's jobstats shows it. Per node and per
// GPU: utilisation mean and max, memory at its highest and as a share of the GPU's, power,
// energy, the GPM activity (SM, tensor, DRAM) where the sampler recorded it, XIDs; time used
// against the limit; then efficiency notes in plain words, judged by thresholds a site sets in
// gpuacct.toml ([detail], man gpuacct(1)). Pure: the caller gathers the numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/record/straggler.hpp"

namespace acme::acct {

struct DetailThresholds {
    double idle_util_max = 5.0;   // a GPU whose utilisation never went above this was idle (percent)
    double low_util_mean = 30.0;  // a GPU busy on average below this is underused (percent)
    double mem_low_pct = 25.0;    // memory at its highest below this share of the GPU's is far below it
    double time_low_pct = 25.0;   // a run shorter than this share of its time limit used little of it
    double min_elapsed_s = 60.0;  // no notes for a run shorter than this: too short to judge
};

// [detail] of gpuacct.toml: the keys above. nullopt with one line in `error` on a bad file
// (unknown key, a value that is not a number, out of range); an empty text is the defaults.
std::optional<DetailThresholds> parse_detail_config(std::string_view toml_text, std::string& error);

struct DetailGpu {
    std::string node;
    int gpu = 0;
    std::int64_t samples = 0, xids = 0;
    std::optional<double> util_avg, util_max, power_avg_w, power_max_w, energy_j;
    std::optional<std::int64_t> mem_max, mem_total;  // bytes
    std::optional<double> gpm_sm, gpm_tensor, gpm_dram;  // percent, means over the run
    std::string verdict;
};

struct DetailXid {
    std::string node;
    int gpu = 0;
    double ts = 0;
    std::int64_t code = 0;
};

// A stall verdict of one run (gputrace(8)): shown to the user and the admin.
struct DetailStall {
    std::int64_t restart = 0;
    double ts = 0, since = 0;
    std::string named;  // empty: no node stood out
    bool hardware = false, withdrawn = false;
    std::string evidence, action;
};

// Why the job's last run failed, as faultguard diagnosed it, and what recovery did about it.
struct DetailFailure {
    std::string node, category, reason, action, rule;
    double confidence = 0;
    std::int64_t restart = 0;
    std::vector<std::string> evidence;  // "line 12: text" (a log line) or "text (source)"
};

struct JobDetail {
    std::int64_t job_id = 0;
    std::string name, user, account, partition, state, nodelist, job_type;
    double submit = 0, start = 0, end = 0;  // end 0: still running
    double elapsed_s = 0;
    std::optional<double> time_limit_s;     // nullopt: unknown or unlimited
    bool time_limit_unlimited = false;
    int alloc_gpus = 0;
    std::vector<DetailGpu> gpus;  // node order, then GPU id
    std::vector<DetailXid> xids;
    // The sampler's held-but-idle events (gputrace(8), IDLE GPUS): kind idle_alert or idle_cancel,
    // code the seconds the GPU had idled; ts order.
    struct Idle {
        std::string node;
        int gpu = 0;
        double ts = 0;
        std::int64_t idle_s = 0;
        bool cancel = false;
    };
    std::vector<Idle> idle;
    std::string telemetry_error;
    std::vector<DetailStall> stalls;     // one per run that had a verdict, oldest first
    std::vector<record::NodeSlowness> slowness;  // multi-node jobs: straggler_scores, node order
    std::optional<DetailFailure> failure;  // a failed run's diagnosis; nullopt: none
    std::vector<std::string> recovery;     // "node n1 drained: REASON", "requeued 1 time"
};

// "no progress since ..., n2 named on GPU evidence: EVIDENCE; action: ACTION" (one line).
std::string stall_text(const DetailStall& s);

// The notes, one sentence each, most costly waste first. Empty when nothing stands out.
std::vector<std::string> efficiency_notes(const JobDetail& job, const DetailThresholds& t);

// The whole block for the terminal, ending in a newline.
std::string render_detail(const JobDetail& job, const DetailThresholds& t);

}  // namespace acme::acct
