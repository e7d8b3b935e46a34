// Default view: one line per job, what sacct shows plus what the GPUs did and why the job failed;
// without -X, sacct's step lines under it (from the tasks' exits; telemetry is per job).
#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "acct/gpuacct/views.hpp"
#include "acct/gpuacct/core/job_states.hpp"

namespace acme::gpuacct {
namespace {

constexpr std::array<Field, 43> kFields = {{
    {"JobID", -12, "job id; steps as JOBID.batch, JOBID.extern, JOBID.STEP"},
    {"JobName", 10, "job name (sbatch -J)"},
    {"User", 9, "user name"},
    {"UID", 6, "user id"},
    {"Account", 10, "account"},
    {"Partition", 10, "partition"},
    {"Type", 8, "job type: pretrain, sft, eval, debug, mllm, other"},
    {"TypeSource", 10, "where Type came from: tag, comment, evalsched, name, default"},
    {"State", 10, "final state, in sacct's words"},
    {"ExitCode", 8, "EXIT:SIGNAL of the batch script"},
    {"DerivedExitCode", 15, "highest EXIT:SIGNAL of the job's steps"},
    {"Restarts", 8, "times Slurm requeued the job (with -D: the run's number, 0 first)"},
    {"Submit", 19, "submit time"},
    {"Start", 19, "start time (of the last run)"},
    {"End", 19, "end time"},
    {"Elapsed", 10, "run time [DD-]HH:MM:SS"},
    {"Reserved", 10, "time queued: Start - Submit"},
    {"NNodes", 8, "nodes allocated"},
    {"NodeList", 15, "nodes allocated"},
    {"AllocGPUS", 9, "GPUs allocated (the job's gres/gpu TRES)"},
    {"GPUIDs", 15, "GPU ids per node, NODE:IDS;..."},
    {"GPUHours", 9, "AllocGPUS x Elapsed, in hours"},
    {"GPUUtil", 7, "mean GPU utilisation, percent (mean over GPUs of each GPU's average)"},
    {"GPUUtilMax", 10, "highest GPU utilisation seen, percent"},
    {"GPUMemMax", 9, "highest GPU memory used on one GPU (base 1024)"},
    {"GPUMemTotal", 11, "memory of that GPU (base 1024)"},
    {"GPUEnergy", 9, "energy the job's GPUs used, joules (base 1000)"},
    {"GPUPowerAvg", 11, "mean power of a GPU, watts"},
    {"GPUPowerMax", 11, "highest power of one GPU, watts"},
    {"GPUTempMax", 10, "highest GPU temperature, Celsius"},
    {"XIDs", 5, "XID events during the job"},
    {"Samples", 8, "telemetry samples, all GPUs"},
    {"Verdict", 8, "ok, low-util, idle, no-data (see VERDICT in gpuacct(1))"},
    {"Reason", 20, "diagnosed failure reason of the last run (faultdiag --reasons)"},
    {"Category", 14, "infrastructure, framework, script, unknown"},
    {"TelemetryErr", 20, "why the job has no telemetry, when it has none: the sampler's error, or \"not requested\" for a finished GPU job that ran without --gpu-telemetry (its Verdict then no-data)"},
    {"MissingNodes", 12, "nodes whose epilog never added their part to the job's acme record (slurmdbd)"},
    {"AllocCPUS", 9, "CPUs allocated (slurmdbd)"},
    {"TotalCPU", 10, "CPU time of all the job's steps, user + system, as sacct prints it: MM:SS.mmm below an hour (slurmdbd)"},
    {"CPUEff", 6, "CPU efficiency, percent: TotalCPU / (AllocCPUS x Elapsed), as seff (slurmdbd)"},
    {"ReqMem", 7, "memory asked for, whole job (base 1024, converted only while exact, as sacct: 8000M, 8G; slurmdbd)"},
    {"MaxRSS", 7, "highest resident memory of any task of the job's steps (base 1024; slurmdbd)"},
    {"MemEff", 6, "memory efficiency, percent: MaxRSS / ReqMem, as seff (slurmdbd)"},
}};

constexpr std::array<std::string_view, 15> kDefaults = {"JobID",     "JobName",  "User",    "Type",       "State",
                                                        "AllocGPUS", "Elapsed",  "GPUUtil", "GPUUtilMax", "GPUMemMax",
                                                        "GPUHours",  "CPUEff",   "MaxRSS",  "Verdict",    "Reason"};

size_t field_index(std::string_view name) {
    for (size_t i = 0; i < kFields.size(); ++i)
        if (kFields[i].name == name) return i;
    return 0;
}

std::string gpu_ids(const acct::Job& job) {
    std::string out;
    for (const auto& n : job.nodes) {
        if (n.gpus.empty()) continue;
        out += fmt::format("{}{}:{}", out.empty() ? "" : ";", n.node, n.gpus);
    }
    return out;
}

std::string nodelist(const acct::Job& job) {
    if (!job.text().nodelist.empty()) return job.text().nodelist;
    std::string out;
    for (const auto& n : job.nodes) out += (out.empty() ? "" : ",") + n.node;
    return out;
}

// A job's row as it is made: a cell no one asked for stays empty, not computed (at 100,000
// jobs the 43 cells of every row, each a string and a JSON value, were most of gpuacct's own
// time when -o shows eight).
struct Row {
    const std::vector<bool>& wanted;
    std::vector<Cell> cells;

    explicit Row(const std::vector<bool>& w) : wanted(w) { cells.reserve(kFields.size()); }
    template <class Make>
    void add(Make&& make) {
        const size_t i = cells.size();
        if (wanted.empty() || (i < wanted.size() && wanted[i])) cells.push_back(make());
        else cells.emplace_back();
    }
};

}  // namespace

void jobs_rows(const Context& context, const std::vector<bool>& wanted, const RowSink& sink) {
    const auto use = acct::gpu_use_by_job(context.data.summaries);
    const auto diagnoses = acct::diagnoses_by_job(context.data.diagnoses);
    const auto exits = acct::task_exits_by_job(context.data.task_exits);
    const char unit = context.units.unit;
    for (const auto& job : context.jobs) {
        const auto u = use.find(job.job_id);
        const acct::GpuUse* g = u == use.end() ? nullptr : &u->second;
        const auto d_it = diagnoses.find(job.job_id);
        const acct::Diagnosis* d = nullptr;
        if (context.per_run) {
            // -D: this run's own figures and diagnosis. A running job without any record has
            // the numbers so far, when they were found (Prometheus, a spool); the job-level
            // figures of a job with an earlier run's record are that run's, not this one's.
            const auto r = context.run_use.find({job.job_id, job.restarts});
            const auto first = context.run_use.lower_bound({job.job_id, std::numeric_limits<int>::min()});
            const bool any_record = first != context.run_use.end() && first->first.first == job.job_id;
            if (r != context.run_use.end()) g = &r->second;
            else if (job.end > 0 || any_record) g = nullptr;
            if (d_it != diagnoses.end()) {
                std::vector<const acct::Diagnosis*> of_run;
                for (const auto* x : d_it->second)
                    if (x->restart == job.restarts) of_run.push_back(x);
                d = acct::final_diagnosis(job, of_run);
            }
            if (d && !acct::state_is_failure(job.state) && !acct::state_is(job.state, "REQUEUED")) d = nullptr;
        } else {
            d = d_it == diagnoses.end() ? nullptr : acct::final_diagnosis(job, d_it->second);
            // A diagnosis explains a run that ended badly; a job that completed after a requeue keeps none.
            if (d && !acct::state_is_failure(job.state) && d->restart >= job.restarts) d = nullptr;
        }
        const double elapsed = acct::job_elapsed(job, context.now);
        const int gpus = acct::job_gpus(job);
        const acct::JobText& text = job.text();
        Row row(wanted);
        row.add([&] { return Cell{std::to_string(job.job_id), job.job_id}; });
        row.add([&] { return text_cell(text.name); });
        row.add([&] { return text_cell(text.user); });
        row.add([&] { return int_cell(text.uid >= 0 ? std::optional(text.uid) : std::nullopt); });
        row.add([&] { return text_cell(text.account); });
        row.add([&] { return text_cell(text.partition); });
        row.add([&] { return text_cell(job.job_type); });
        row.add([&] { return text_cell(text.job_type_source); });
        row.add([&] { return text_cell(job.state.empty() ? (job.end > 0 ? "UNKNOWN" : "RUNNING") : job.state); });
        row.add([&] { return text_cell(text.exit_code); });
        row.add([&] { return text_cell(text.derived_exit_code); });
        row.add([&] { return int_cell(job.restarts); });
        row.add([&] { return time_cell(job.submit); });
        row.add([&] { return time_cell(job.start); });
        row.add([&] { return job.end > 0 ? time_cell(job.end) : Cell{job.start > 0 ? "Unknown" : "", nullptr}; });
        row.add([&] { return elapsed_cell(elapsed); });
        row.add([&] { return elapsed_cell(job.start > 0 && job.submit > 0 ? std::optional(std::max(0.0, job.start - job.submit))
                                                                   : std::nullopt); });
        row.add([&] { return int_cell(job.num_nodes > 0 ? job.num_nodes : static_cast<std::int64_t>(job.nodes.size())); });
        row.add([&] { return text_cell(nodelist(job)); });
        row.add([&] { return int_cell(gpus); });
        row.add([&] { return text_cell(gpu_ids(job)); });
        row.add([&] { return real_cell(gpus * elapsed / 3600.0, 2); });
        row.add([&] { return real_cell(g ? g->util_avg : std::nullopt, 1); });
        row.add([&] { return real_cell(g ? g->util_max : std::nullopt, 1); });
        row.add([&] { return bytes_cell(g ? g->mem_max : std::nullopt, unit, 'M'); });
        row.add([&] { return bytes_cell(g ? g->mem_total : std::nullopt, unit, 'M'); });
        row.add([&] { return energy_cell(g ? g->energy_j : std::nullopt); });
        row.add([&] { return real_cell(g ? g->power_avg_w : std::nullopt, 1); });
        row.add([&] { return real_cell(g ? g->power_max_w : std::nullopt, 1); });
        row.add([&] { return int_cell(g ? g->temp_max : std::nullopt); });
        row.add([&] { return int_cell(g ? std::optional(g->xids) : std::nullopt); });
        row.add([&] { return int_cell(g ? std::optional(g->samples) : std::nullopt); });
        // A finished GPU job with no samples at all is no-data (gpuacct(1) VERDICT); with no
        // error recorded either, its telemetry was never asked for (--gpu-telemetry).
        std::string telemetry_error = text.telemetry_error;
        const bool finished = job.end > 0 && !job.state.empty() && !acct::state_is(job.state, "RUNNING") &&
                              !acct::state_is(job.state, "PENDING") && !acct::state_is(job.state, "SUSPENDED");
        if (!g && finished && gpus > 0 && telemetry_error.empty()) telemetry_error = "not requested";
        row.add([&] { return text_cell(g ? g->verdict : (telemetry_error.empty() ? "" : "no-data")); });
        row.add([&] { return text_cell(d ? d->reason : ""); });
        row.add([&] { return text_cell(d ? d->category : ""); });
        row.add([&] { return text_cell(telemetry_error); });
        row.add([&] { return text_cell(text.missing_nodes); });
        row.add([&] { return int_cell(text.alloc_cpus > 0 ? std::optional(text.alloc_cpus) : std::nullopt); });
        row.add([&] { return cpu_time_cell(text.total_cpu_s); });
        // seff's CPU efficiency: the CPU time the steps used of what the allocation held.
        std::optional<double> cpu_eff;
        if (text.total_cpu_s && text.elapsed_s && *text.elapsed_s > 0 && text.alloc_cpus > 0)
            cpu_eff = 100.0 * *text.total_cpu_s / (*text.elapsed_s * static_cast<double>(text.alloc_cpus));
        row.add([&] { return real_cell(cpu_eff, 1); });
        row.add([&] { return sacct_bytes_cell(text.req_mem, unit, 'M'); });
        row.add([&] { return sacct_bytes_cell(text.max_rss, unit, 'K'); });
        std::optional<double> mem_eff;
        if (text.max_rss && text.req_mem && *text.req_mem > 0)
            mem_eff = 100.0 * static_cast<double>(*text.max_rss) / static_cast<double>(*text.req_mem);
        row.add([&] { return real_cell(mem_eff, 1); });
        sink(std::move(row.cells));
        if (context.allocations) continue;
        const auto e = exits.find(job.job_id);
        if (e == exits.end()) continue;
        for (const auto& step : acct::job_steps(e->second)) {
            std::vector<Cell> line(kFields.size());
            auto set = [&](std::string_view field, Cell cell) { line[field_index(field)] = std::move(cell); };
            set("JobID", text_cell(fmt::format("{}.{}", job.job_id, step.step)));
            set("JobName", text_cell(step.step == "batch" || step.step == "extern" ? step.step : ""));
            set("State", text_cell(step.state));
            set("ExitCode", text_cell(step.exit_code));
            set("End", time_cell(step.end));
            set("NodeList", text_cell(step.nodes));
            sink(std::move(line));
        }
    }
}

acct::RecordUse jobs_record_use(std::span<const acct::FieldSpec> format) {
    // Made of slurmdbd's row alone (take_fields in core/slurmdbd_set.cpp).
    constexpr std::array<std::string_view, 22> kSlurmdbdOnly = {
        "JobID",    "JobName", "User",     "UID",     "Account", "Partition", "Type",    "TypeSource",
        "State",    "ExitCode", "DerivedExitCode", "Submit", "Start", "End",   "Elapsed", "Reserved",
        "AllocCPUS", "TotalCPU", "CPUEff", "ReqMem",  "MaxRSS",  "MemEff"};
    acct::RecordUse use;
    use.always = false;
    for (const auto& f : format) {
        if (f.name == "NNodes") use.nodes = true;
        else if (f.name == "NodeList") use.nodelist = true;
        else if (f.name == "AllocGPUS" || f.name == "GPUHours") use.gpus = true;
        else if (std::find(kSlurmdbdOnly.begin(), kSlurmdbdOnly.end(), f.name) == kSlurmdbdOnly.end()) use.always = true;
    }
    return use;
}

Table jobs_view(const Context& context) {
    Table table{"jobs", {kFields.begin(), kFields.end()}, {kDefaults.begin(), kDefaults.end()}, {}};
    jobs_rows(context, {}, [&](std::vector<Cell>&& row) { table.rows.push_back(std::move(row)); });
    return table;
}

}  // namespace acme::gpuacct
