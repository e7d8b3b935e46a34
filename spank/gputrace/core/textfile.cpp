#include "spank/gputrace/core/textfile.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <functional>
#include <iterator>
#include <optional>

namespace acme::telemetry {
namespace {

// A metric's value for one GPU, or nullopt when the reading is absent (never written as 0).
using Value = std::function<std::optional<double>(const TextfileGpu&)>;

struct Metric {
    const char* name;
    const char* type;
    const char* help;
    Value value;
};

template <class T>
std::optional<double> as_double(const std::optional<T>& v) {
    if (!v) return std::nullopt;
    return static_cast<double>(*v);
}

template <class F>
Value reading(F f) {
    return [f](const TextfileGpu& g) -> std::optional<double> {
        if (!g.sample) return std::nullopt;
        return f(g.sample->reading);
    };
}

// The spool keeps bytes (NVML's unit); DCGM's FB_* are MiB.
std::optional<double> mib(const std::optional<long long>& bytes) {
    if (!bytes) return std::nullopt;
    return static_cast<double>(*bytes) / (1024.0 * 1024.0);
}

std::optional<double> ratio(const std::optional<double>& percent) {
    if (!percent) return std::nullopt;
    return *percent / 100.0;
}

// The order and the HELP text are part of the contract: HELP must be byte-identical in every
// job's file, so it never names the job or the node.
const std::vector<Metric>& metrics() {
    static const std::vector<Metric> table = {
        {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).",
         reading([](const nvml::Reading& r) { return r.util_gpu; })},
        {"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).",
         reading([](const nvml::Reading& r) { return r.util_mem; })},
        {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).",
         reading([](const nvml::Reading& r) { return mib(r.mem_used); })},
        {"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).",
         reading([](const nvml::Reading& r) -> std::optional<double> {
             if (!r.mem_used || !r.mem_total) return std::nullopt;
             return mib(*r.mem_total - *r.mem_used);
         })},
        {"DCGM_FI_DEV_FB_TOTAL", "gauge", "Framebuffer memory total (in MiB).",
         reading([](const nvml::Reading& r) { return mib(r.mem_total); })},
        {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).",
         reading([](const nvml::Reading& r) -> std::optional<double> {
             if (!r.power_mw) return std::nullopt;
             return static_cast<double>(*r.power_mw) / 1000.0;
         })},
        {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter",
         "Total energy consumption since boot (in mJ).",
         reading([](const nvml::Reading& r) { return as_double(r.energy_mj); })},
        {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).",
         reading([](const nvml::Reading& r) { return as_double(r.temp_c); })},
        {"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).",
         reading([](const nvml::Reading& r) { return as_double(r.sm_clock_mhz); })},
        {"DCGM_FI_PROF_SM_ACTIVE", "gauge", "Ratio of cycles an SM has at least 1 warp assigned (0 to 1).",
         reading([](const nvml::Reading& r) { return ratio(r.gpm_sm_util); })},
        {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active (0 to 1).",
         reading([](const nvml::Reading& r) { return ratio(r.gpm_tensor_util); })},
        {"DCGM_FI_PROF_DRAM_ACTIVE", "gauge", "Ratio of cycles the device memory interface is active (0 to 1).",
         reading([](const nvml::Reading& r) { return ratio(r.gpm_dram_bw_util); })},
        // XIDs come from the event stream, not a sample: known (0 = none) for every GPU.
        {"DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error seen during the job (0: none).",
         [](const TextfileGpu& g) -> std::optional<double> { return static_cast<double>(g.last_xid); }},
        {"acme_gpu_xid_events_total", "counter", "XID events seen on the GPU during the job.",
         [](const TextfileGpu& g) -> std::optional<double> { return static_cast<double>(g.xid_count); }},
        {"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors.",
         reading([](const nvml::Reading& r) { return as_double(r.ecc_corrected); })},
        {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors.",
         reading([](const nvml::Reading& r) { return as_double(r.ecc_uncorrected); })},
        // Held-but-idle GPUs (gputrace(8) idle_*): per GPU, so bounded by the node's GPUs; the
        // job is on acme_job_gpu_info.
        {"acme_gpu_idle_seconds", "gauge",
         "Seconds the GPU has been held by its job but idle (utilization at or below idle_util, or no process of the job); 0: in use.",
         [](const TextfileGpu& g) { return g.idle_seconds; }},
        {"acme_gpu_idle_alert", "gauge", "1 while the GPU's idle spell has passed gputrace's idle_alert; 0 otherwise.",
         [](const TextfileGpu& g) -> std::optional<double> {
             if (!g.idle_seconds) return std::nullopt;
             return g.idle_alert ? 1.0 : 0.0;
         }},
        {"acme_gpu_sample_timestamp_seconds", "gauge", "Unix time of the GPU sample these values come from.",
         [](const TextfileGpu& g) -> std::optional<double> {
             if (!g.sample) return std::nullopt;
             return g.sample->ts;
         }},
    };
    return table;
}

// Which job holds the GPU: the one series per job and GPU, joined to the GPU series in queries
// (`* on(Hostname, gpu) group_left(hpc_job, user) acme_job_gpu_info`), so only this series is
// new for each job. Written for every GPU of the job, with or without a sample.
constexpr const char* kInfo = "acme_job_gpu_info";
constexpr const char* kInfoHelp = "The job and user holding the GPU (always 1); join on Hostname and gpu.";

// The node's live straggler score: per node, not per GPU, so it has its own labels.
constexpr const char* kSlowness = "acme_job_node_slowness";
constexpr const char* kSlownessHelp =
    "How much slower this node's GPUs work than the job's typical node (1: typical; typical node's work rate / this node's).";

}  // namespace

std::string escape_label_value(const std::string& value) {
    std::string out;
    out.reserve(value.size());
    for (char c : value) {
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

std::string textfile_name(long long job_id) { return fmt::format("acme-gputrace-{}.prom", job_id); }
std::string textfile_tmp_name(long long job_id) { return fmt::format(".acme-gputrace-{}.prom.tmp", job_id); }

TextfileFormat::TextfileFormat(const TextfileJob& job, const std::vector<TextfileGpu>& gpus) {
    const std::string job_labels = fmt::format(R"(hpc_job="{}",user="{}")", job.job_id, escape_label_value(job.user));
    std::vector<std::string> labels;
    labels.reserve(gpus.size());
    for (const auto& g : gpus)
        labels.push_back(fmt::format(R"(gpu="{}",UUID="{}",device="nvidia{}",modelName="{}",Hostname="{}"{}{})",
                                     g.device.minor, escape_label_value(g.device.uuid), g.device.minor,
                                     escape_label_value(g.device.name), escape_label_value(job.node),
                                     job.job_labels ? "," : "", job.job_labels ? job_labels : std::string()));
    for (const auto& m : metrics()) {
        MetricText t;
        t.header = fmt::format("# HELP {} {}\n# TYPE {} {}\n", m.name, m.help, m.name, m.type);
        for (const auto& l : labels) t.prefix.push_back(fmt::format("{}{{{}}} ", m.name, l));
        metrics_.push_back(std::move(t));
    }
    info_.header = fmt::format("# HELP {0} {1}\n# TYPE {0} gauge\n", kInfo, kInfoHelp);
    for (const auto& g : gpus)
        info_.prefix.push_back(fmt::format(R"({}{{{},Hostname="{}",gpu="{}"}} 1)" "\n", kInfo, job_labels,
                                           escape_label_value(job.node), g.device.minor));
    slowness_.header = fmt::format("# HELP {0} {1}\n# TYPE {0} gauge\n", kSlowness, kSlownessHelp);
    slowness_.prefix.push_back(fmt::format(R"({}{{Hostname="{}",hpc_job="{}",user="{}"}} )", kSlowness,
                                           escape_label_value(job.node), job.job_id, escape_label_value(job.user)));
}

void TextfileFormat::format(const std::vector<TextfileGpu>& gpus, std::string& out,
                            std::optional<double> slowness) const {
    out.clear();
    const auto& table = metrics();
    for (std::size_t k = 0; k < table.size(); ++k) {
        const auto& text = metrics_[k];
        // HELP/TYPE only for a metric with a series here (a lone HELP is legal but noise):
        // written first, taken back if no GPU has the reading.
        const std::size_t mark = out.size();
        out += text.header;
        bool any = false;
        for (std::size_t i = 0; i < gpus.size() && i < text.prefix.size(); ++i) {
            const auto v = table[k].value(gpus[i]);
            if (!v) continue;
            out += text.prefix[i];
            fmt::format_to(std::back_inserter(out), FMT_COMPILE("{}\n"), *v);
            any = true;
        }
        if (!any) out.resize(mark);
    }
    if (!info_.prefix.empty()) {
        out += info_.header;
        for (std::size_t i = 0; i < gpus.size() && i < info_.prefix.size(); ++i) out += info_.prefix[i];
    }
    if (slowness) {
        out += slowness_.header;
        out += slowness_.prefix.front();
        fmt::format_to(std::back_inserter(out), FMT_COMPILE("{:.3f}\n"), *slowness);
    }
}

std::string format_textfile(const TextfileJob& job, const std::vector<TextfileGpu>& gpus, std::optional<double> slowness) {
    std::string out;
    TextfileFormat(job, gpus).format(gpus, out, slowness);
    return out;
}

}  // namespace acme::telemetry
