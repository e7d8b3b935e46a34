// The sampler's Prometheus view of one job on one node: node_exporter's textfile-collector
// format and DCGM-exporter's metric names. The GPU series are labelled by node and GPU only (as
// dcgm-exporter labels them without job mapping), and the job is on one info series per GPU,
// acme_job_gpu_info{hpc_job,user,Hostname,gpu} 1, that queries join on (Hostname, gpu): a label
// that changes with every job would make new series for every job, and evaluation trials are
// jobs of minutes (Prometheus' head block would grow with job churn, not with GPUs). A site
// whose dashboards select on hpc_job (DCGM-exporter's HPC job mapping) can put the job labels
// back on every series (job_labels). The contract is man/gputrace.8's table.
// Pure: the writer (textfile_writer.hpp) puts the text on disk.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/nvml/library.hpp"
#include "spank/gputrace/core/spool_writer.hpp"

namespace acme::telemetry {

// One of the job's GPUs: its identity, its latest sample, and the XIDs seen on it this job.
struct TextfileGpu {
    nvml::Library::Device device;  // minor, name (modelName), uuid; the handle is unused
    const Sample* sample = nullptr;  // the latest; null: identity-only (no readings written)
    long long xid_count = 0;
    long long last_xid = 0;  // 0: none seen
    // Held-but-idle (idle.hpp): seconds of the current idle spell (0: in use) and whether it
    // passed idle_alert; absent where the site's idle policy is off or the job is exempt.
    std::optional<double> idle_seconds;
    bool idle_alert = false;
};

struct TextfileJob {
    std::string node;  // Slurm node name (label Hostname)
    long long job_id = 0;  // label hpc_job
    std::string user;  // label user
    // hpc_job and user also on every GPU series (gputrace(8) textfile_job_labels=yes): the
    // series then churn with the jobs, as DCGM-exporter's job mapping does.
    bool job_labels = false;
};

// The exposition text: # HELP and # TYPE once per metric (identical in every file, as
// node_exporter requires across files), one series per GPU, absent readings omitted, the job's
// info series per GPU (acme_job_gpu_info); then,
// when given, the node's live straggler score (live_slowness.hpp) as one series without GPU
// labels: acme_job_node_slowness{Hostname,hpc_job,user}.
std::string format_textfile(const TextfileJob& job, const std::vector<TextfileGpu>& gpus,
                            std::optional<double> slowness = std::nullopt);

// The same text, for a sampler that writes it at every tick: the job's and GPUs' labels never
// change within a job, so each series' "NAME{labels} " is built once here and a tick only
// appends the numbers into a buffer the caller keeps (its capacity survives the ticks).
class TextfileFormat {
public:
    // The identities (device) of `gpus` are taken; their samples are not.
    TextfileFormat(const TextfileJob& job, const std::vector<TextfileGpu>& gpus);
    // Replaces `out` with the text for `gpus`: the same GPUs, in the same order, as given to
    // the constructor (anything else is a programming error; the extra or missing are skipped).
    void format(const std::vector<TextfileGpu>& gpus, std::string& out,
                std::optional<double> slowness = std::nullopt) const;

private:
    struct MetricText {
        std::string header;  // "# HELP ...\n# TYPE ...\n"
        std::vector<std::string> prefix;  // per GPU: "NAME{labels} "
    };
    std::vector<MetricText> metrics_;  // in metrics() order
    MetricText info_;                  // per GPU: the whole line of its job's info series
    MetricText slowness_;              // one prefix: the node's, not a GPU's
};

// A label value escaped per the exposition format: backslash, double quote, newline.
std::string escape_label_value(const std::string& value);

// The file's name inside textfile_dir, and its temporary name in the same directory (dot-first:
// node_exporter reads only *.prom, so a half-written file is never collected).
std::string textfile_name(long long job_id);
std::string textfile_tmp_name(long long job_id);

}  // namespace acme::telemetry
