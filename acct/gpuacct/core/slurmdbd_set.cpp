#include "acct/gpuacct/core/slurmdbd_set.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/record/codec.hpp"
#include "common/record/keys.hpp"
#include "common/record/record.hpp"
#include "common/slurm/job_type.hpp"

namespace acme::acct {
namespace {

using nlohmann::json;
namespace key = record::key;

std::optional<double> number(const json& o, const char* name) {
    if (!o.is_object() || !o.contains(name) || !o[name].is_number()) return std::nullopt;
    return o[name].get<double>();
}

std::optional<std::int64_t> integer(const json& o, const char* name) {
    const auto v = number(o, name);
    if (!v) return std::nullopt;
    return static_cast<std::int64_t>(*v);
}

std::string string_of(const json& o, const char* name) {
    if (!o.is_object() || !o.contains(name) || !o[name].is_string()) return {};
    return o[name].get<std::string>();
}

constexpr std::int64_t kMiB = 1024 * 1024;

// The record keeps the plugin's units rounded for the field (MiB, W, J); the model is the
// spool's (bytes, mW, mJ).
GpuSummary summary_of(const json& g, std::int64_t job_id, const std::string& node) {
    GpuSummary s;
    s.job_id = job_id;
    s.node = node;
    s.gpu = static_cast<int>(integer(g, key::gpu::id).value_or(0));
    s.samples = integer(g, key::gpu::samples).value_or(0);
    s.util_avg = number(g, key::gpu::util_avg);
    s.util_max = number(g, key::gpu::util_max);
    if (const auto v = integer(g, key::gpu::mem_max_mib)) s.mem_max = *v * kMiB;
    if (const auto v = integer(g, key::gpu::mem_total_mib)) s.mem_total = *v * kMiB;
    if (const auto v = number(g, key::gpu::power_avg_w)) s.power_avg_mw = *v * 1000;
    if (const auto v = number(g, key::gpu::power_max_w)) s.power_max_mw = static_cast<std::int64_t>(*v * 1000);
    if (const auto v = number(g, key::gpu::energy_j)) s.energy_mj = static_cast<std::int64_t>(*v * 1000);
    s.temp_max = integer(g, key::gpu::temp_max_c);
    s.xids = integer(g, key::gpu::xids).value_or(0);
    s.ecc_uncorrected = integer(g, key::gpu::ecc_dbe);
    s.verdict = string_of(g, key::gpu::verdict);
    return s;
}

// A trimmed record folds a node's GPUs into totals (record.cpp's gpu_totals). Spread back over
// `count` GPUs so the job's figures come out the same: the mean of equal means is the mean, the
// max of equal maxima the max, energy split sums back, XIDs counted once; the verdicts seen are
// dealt out in turn. Per-GPU detail is gone, and GPU ids are unknown (numbered from 0).
void add_totals(const json& t, std::int64_t job_id, const std::string& node, std::vector<GpuSummary>& out) {
    const auto count = integer(t, key::totals::count).value_or(0);
    std::vector<std::string> verdicts;
    if (t.contains(key::totals::verdicts) && t[key::totals::verdicts].is_array())
        for (const auto& v : t[key::totals::verdicts])
            if (v.is_string()) verdicts.push_back(v.get<std::string>());
    for (std::int64_t i = 0; i < count; ++i) {
        GpuSummary s;
        s.job_id = job_id;
        s.node = node;
        s.gpu = static_cast<int>(i);
        s.samples = 1;
        s.util_avg = number(t, key::gpu::util_avg);
        s.util_max = number(t, key::gpu::util_max);
        if (const auto v = number(t, key::gpu::mem_max_mib)) s.mem_max = static_cast<std::int64_t>(*v) * kMiB;
        if (const auto v = number(t, key::gpu::energy_j)) s.energy_mj = static_cast<std::int64_t>(*v * 1000 / static_cast<double>(count));
        s.xids = i == 0 ? integer(t, key::gpu::xids).value_or(0) : 0;
        s.verdict = verdicts.empty() ? "no-data" : verdicts[static_cast<size_t>(i) % verdicts.size()];
        if (s.verdict == "no-data") s.samples = 0;
        out.push_back(std::move(s));
    }
}

std::string gpu_id_list(const json& part) {
    std::string ids;
    if (!part.contains(key::part::gpus) || !part[key::part::gpus].is_array()) return ids;
    for (const auto& g : part[key::part::gpus])
        if (const auto id = integer(g, key::gpu::id)) ids += (ids.empty() ? "" : ",") + std::to_string(*id);
    return ids;
}

// The record of one run, or nullopt (no token, or a damaged one: then a warning).
std::optional<json> record_of(const slurm::AccountedRun& run, std::vector<std::string>& warnings) {
    std::string error;
    const auto text = record::decode_token(run.admin_comment, error);
    if (!text) {
        if (!error.empty())
            warnings.push_back(fmt::format("job {}: {}: listed from slurmdbd's fields only", run.job_id, error));
        return std::nullopt;
    }
    auto parsed = record::parse_record(*text, error);
    if (!parsed) warnings.push_back(fmt::format("job {}: {}: listed from slurmdbd's fields only", run.job_id, error));
    else if ((*parsed)[key::job].get<long long>() != run.job_id) {
        warnings.push_back(fmt::format("job {}: its ACME1 record is of job {}: listed from slurmdbd's fields only",
                                       run.job_id, (*parsed)[key::job].get<long long>()));
        return std::nullopt;
    }
    return parsed;
}

bool in_window(double ts, const ReadOptions& options) {
    return (!options.start || ts >= *options.start) && (!options.end || ts <= *options.end);
}

struct Builder {
    const ReadOptions& options;
    SpoolSet& out;
    std::set<std::string> nodes;
    std::map<std::string, HealthCheck> health;  // the newest gate verdict per node

    // Events, diagnoses, drains and gate verdicts of one run's record.
    void add_run(const json& r, std::int64_t job_id, std::int64_t restart) {
        if (r.contains(key::expected) && r[key::expected].is_array())
            for (const auto& n : r[key::expected])
                if (n.is_string()) nodes.insert(n.get<std::string>());
        for (const auto& [node, part] : r[key::nodes].items()) {
            nodes.insert(node);
            const double ts = number(part, key::part::ts).value_or(0);
            if (part.contains(key::part::events) && part[key::part::events].is_array())
                for (const auto& e : part[key::part::events]) {
                    GpuEvent ev{node, job_id, static_cast<int>(integer(e, key::event::gpu).value_or(0)), number(e, key::event::ts).value_or(0),
                                string_of(e, key::event::kind), integer(e, key::event::code).value_or(0)};
                    if (in_window(ev.ts, options)) out.events.push_back(std::move(ev));
                }
            if (part.contains(key::part::diagnosis) && part[key::part::diagnosis].is_object()) {
                const json& d = part[key::part::diagnosis];
                // The evidence lines, as the spool keeps them (a JSON array): the job view shows them.
                out.diagnoses.push_back({.job_id = job_id,
                                         .restart = restart,
                                         .node = node,
                                         .category = string_of(d, key::diagnosis::category),
                                         .reason = string_of(d, key::diagnosis::reason),
                                         .action = string_of(d, key::diagnosis::action),
                                         .rule = string_of(d, key::diagnosis::rule),
                                         .ts = ts,
                                         .confidence = number(d, key::diagnosis::confidence).value_or(0),
                                         .evidence_json = d.contains(key::diagnosis::evidence) && d[key::diagnosis::evidence].is_array()
                                                              ? d[key::diagnosis::evidence].dump()
                                                              : std::string()});
            }
            if (part.contains(key::part::stall) && part[key::part::stall].is_object() && options.summaries) {
                const json& st = part[key::part::stall];
                auto flag = [&](const char* name) { return st.contains(name) && st[name].is_boolean() && st[name].get<bool>(); };
                out.stalls.push_back({job_id, restart, node, number(st, key::stall::ts).value_or(ts), number(st, key::stall::since).value_or(0),
                                      string_of(st, key::stall::named), flag(key::stall::hardware), flag(key::stall::withdrawn),
                                      string_of(st, key::stall::evidence), string_of(st, key::stall::action)});
            }
            if (part.contains(key::part::recovery) && part[key::part::recovery].is_object()) {
                const json& rec = part[key::part::recovery];
                if (rec.contains(key::recovery::drained) && rec[key::recovery::drained].is_boolean() && rec[key::recovery::drained].get<bool>() && in_window(ts, options))
                    out.drains.push_back({node, string_of(rec, key::recovery::drain_reason), job_id, ts});
            }
            if (part.contains(key::part::gate) && part[key::part::gate].is_object() && (!options.end || ts <= *options.end)) {
                const json& g = part[key::part::gate];
                HealthCheck h{node, string_of(g, key::gate::detail), ts, g.contains(key::gate::passed) && g[key::gate::passed].is_boolean() && g[key::gate::passed].get<bool>()};
                auto& slot = health[node];
                if (slot.node.empty() || slot.ts <= ts) slot = std::move(h);
            }
        }
    }

};

// One run's GPU summaries, from its record's per-GPU entries or a trimmed record's totals.
void add_gpus(const json& r, std::int64_t job_id, std::vector<GpuSummary>& out) {
    for (const auto& [node, part] : r[key::nodes].items()) {
        if (part.contains(key::part::gpus) && part[key::part::gpus].is_array()) {
            for (const auto& g : part[key::part::gpus])
                if (g.is_object()) out.push_back(summary_of(g, job_id, node));
        } else if (part.contains(key::part::gpu_totals) && part[key::part::gpu_totals].is_object()) {
            add_totals(part[key::part::gpu_totals], job_id, node, out);
        }
    }
}

// Every node any run reported from, with the GPU ids of the last run it was in: what the
// spools' rows hold (each node keeps its own last run), so --nodes counts a node the job left
// after a requeue. `runs`: the job's records, oldest first.
void add_node_rows(const std::vector<json>& runs, Job& job) {
    std::map<std::string, std::string> ids;
    for (const auto& r : runs)
        for (const auto& [node, part] : r[key::nodes].items()) ids[node] = gpu_id_list(part);
    job.gpu_ids = 0;
    for (auto& [node, list] : ids) {
        if (!list.empty()) job.gpu_ids += static_cast<int>(std::count(list.begin(), list.end(), ',')) + 1;
        job.nodes.push_back({node, std::move(list)});
    }
}

// Slurm's own fields of the run that speaks for the job.
void take_fields(Job& job, const slurm::AccountedRun& run) {
    job.job_id = run.job_id;
    job.state = run.state;
    job.num_nodes = run.num_nodes;
    job.gpus_total = static_cast<int>(run.gpus.value_or(0));
    job.submit = run.submit;
    job.start = run.start;
    job.end = run.end;
    const auto type = classify_job_type({"", run.comment, run.name});
    job.job_type = std::string(type.type);
    JobText& t = job.mutable_text();
    t.uid = run.uid;
    t.user = run.user;
    t.account = run.account;
    t.partition = run.partition;
    t.name = run.name;
    t.job_type_source = std::string(type.source);
    t.nodelist = run.nodes;
    t.exit_code = run.exit_code;
    t.derived_exit_code = run.derived_exit_code;
    t.alloc_cpus = run.alloc_cpus > 0 ? run.alloc_cpus : run.req_cpus;
    if (run.start > 0) {
        t.total_cpu_s = run.total_cpu_s;
        t.elapsed_s = run.elapsed_s;
    }
    t.req_mem = run.req_mem_bytes;
    t.max_rss = run.max_rss_bytes;
}

// The nodes a record misses, and the batch host: it runs first in Slurm's node order, and
// final_diagnosis prefers it on a tie (it read the job's log).
void take_record_nodes(const json& r, Job& job) {
    std::string missing;
    for (const auto& n : record::missing_nodes(r)) missing += (missing.empty() ? "" : ",") + n;
    job.mutable_text().missing_nodes = std::move(missing);
    if (r.contains(key::expected) && r[key::expected].is_array() && !r[key::expected].empty() && r[key::expected][0].is_string())
        job.batch_host = r[key::expected][0].get<std::string>();
}

// The record's own run number, else its row's among the job's runs.
std::int64_t restart_of(const json& r, std::int64_t row) {
    return r.contains(key::restart) && r[key::restart].is_number_integer() ? r[key::restart].get<std::int64_t>() : row;
}

}  // namespace

// One job of its runs (oldest first): Slurm's fields of the newest run and, with `records`,
// what their ACME1 records add: each run's events, diagnoses and the rest through `builder`,
// the node rows, the batch host and the missing nodes, and the newest recorded run's GPU
// summaries into `summaries` when given. Without `records` no record is decoded: the job has
// slurmdbd's fields only, its restarts counted by its rows.
void build_job(std::span<const slurm::AccountedRun* const> runs, bool records, Builder& builder,
               std::vector<GpuSummary>* summaries, Job& job, std::vector<std::string>& warnings) {
    take_fields(job, *runs.back());
    std::int64_t restarts = static_cast<std::int64_t>(runs.size() - 1);
    std::vector<json> decoded;
    for (size_t k = 0; records && k < runs.size(); ++k) {
        auto r = record_of(*runs[k], warnings);
        if (!r) continue;
        // The record names its run; a record without one is counted by its row.
        const std::int64_t restart = restart_of(*r, static_cast<std::int64_t>(k));
        restarts = std::max(restarts, restart);
        builder.add_run(*r, job.job_id, restart);
        decoded.push_back(std::move(*r));
    }
    job.restarts = static_cast<int>(restarts);
    if (!decoded.empty()) {
        const json* newest = &decoded.back();
        // The newest recorded run's GPU summaries (a spool keeps only the last run's too).
        if (summaries) add_gpus(*newest, job.job_id, *summaries);
        add_node_rows(decoded, job);
        take_record_nodes(*newest, job);
    }
}

// Built in place: the builder refers to the options and the set beside it.
struct AccountingSetBuilder::State {
    explicit State(const ReadOptions& o) : options(o) {}
    ReadOptions options;
    SpoolSet out;
    Builder builder{options, out, {}, {}};
};

AccountingSetBuilder::AccountingSetBuilder(const ReadOptions& options, size_t jobs)
    : state_(std::make_unique<State>(options)) {
    // Room for every job at once: grown by doubling, moving 100,000 jobs cost a tenth of
    // gpuacct's own time.
    state_->out.jobs.reserve(jobs);
}

AccountingSetBuilder::~AccountingSetBuilder() = default;

void AccountingSetBuilder::add_job(std::span<const slurm::AccountedRun* const> runs, std::vector<std::string>& warnings,
                                   bool records) {
    if (runs.empty()) return;
    Job job;
    build_job(runs, records, state_->builder, &state_->out.summaries, job, warnings);
    state_->out.jobs.push_back(std::move(job));
}

// The scratch set is the builder's output, emptied before each job.
struct AccountedJobs::State {
    ReadOptions options;  // every event, no stalls: only the diagnoses are handed out
    SpoolSet scratch;
    Builder builder{options, scratch, {}, {}};
    Job job;
};

AccountedJobs::AccountedJobs() : state_(std::make_unique<State>()) { state_->options.summaries = false; }

AccountedJobs::~AccountedJobs() = default;

Job& AccountedJobs::next(std::span<const slurm::AccountedRun* const> runs, bool records,
                               std::vector<std::string>& warnings) {
    State& s = *state_;
    s.scratch.diagnoses.clear();
    s.scratch.events.clear();
    s.scratch.drains.clear();
    s.scratch.stalls.clear();
    s.builder.nodes.clear();
    s.builder.health.clear();
    s.job = Job{};
    if (!runs.empty()) build_job(runs, records, s.builder, nullptr, s.job, warnings);
    return s.job;
}

std::span<const Diagnosis> AccountedJobs::diagnoses() const { return state_->scratch.diagnoses; }

SpoolSet AccountingSetBuilder::finish() {
    SpoolSet& out = state_->out;
    Builder& builder = state_->builder;
    out.nodes.assign(builder.nodes.begin(), builder.nodes.end());
    for (auto& [node, h] : builder.health) out.last_health.push_back(std::move(h));
    std::sort(out.events.begin(), out.events.end(), [](const GpuEvent& a, const GpuEvent& b) { return a.ts < b.ts; });
    return std::move(out);
}

namespace {

// Each job's runs of `runs` (any order), oldest first.
template <class Each>
void each_job(std::span<const slurm::AccountedRun> runs, Each each) {
    std::vector<const slurm::AccountedRun*> order;
    for (const auto& run : runs) order.push_back(&run);
    slurm::for_each_job_group(
        order.begin(), order.end(), [](const auto* r) { return r->job_id; }, [](const auto* r) { return r->db_index; },
        [&](auto first, auto last) { each(std::span<const slurm::AccountedRun* const>(&*first, static_cast<size_t>(last - first))); });
}

size_t job_count(std::span<const slurm::AccountedRun> runs) {
    size_t jobs = 0;
    each_job(runs, [&](auto) { ++jobs; });
    return jobs;
}

}  // namespace

SpoolSet spool_set_from_accounting(std::span<const slurm::AccountedRun> runs, const ReadOptions& options,
                                   std::vector<std::string>& warnings) {
    AccountingSetBuilder builder(options, job_count(runs));
    each_job(runs, [&](auto job) { builder.add_job(job, warnings); });
    return builder.finish();
}

void add_run_rows(std::span<const slurm::AccountedRun* const> runs, std::vector<RunRow>& out) {
    for (size_t row = 0; row < runs.size(); ++row) {
        const slurm::AccountedRun& run = *runs[row];
        RunRow r;
        take_fields(r.job, run);
        r.job.restarts = static_cast<int>(row);
        // Damaged records were warned about when the job set was built: not twice.
        std::vector<std::string> ignored;
        if (auto record = record_of(run, ignored)) {
            const ReadOptions every;
            SpoolSet of_run;
            Builder builder{every, of_run, {}, {}};
            builder.add_run(*record, r.job.job_id, static_cast<std::int64_t>(row));
            r.diagnoses = std::move(of_run.diagnoses);
            add_gpus(*record, r.job.job_id, r.gpus);
            add_node_rows({*record}, r.job);
            take_record_nodes(*record, r.job);
        }
        out.push_back(std::move(r));
    }
}

std::vector<RunRow> runs_from_accounting(std::span<const slurm::AccountedRun> runs) {
    std::vector<RunRow> out;
    each_job(runs, [&](auto job) { add_run_rows(job, out); });
    return out;
}

void add_gpm(const slurm::AccountedRun& newest, std::map<GpmKey, GpmActivity>& out) {
    std::vector<std::string> ignored;
    const auto r = record_of(newest, ignored);
    if (!r || !r->contains(key::nodes) || !(*r)[key::nodes].is_object()) return;
    for (const auto& [node, part] : (*r)[key::nodes].items()) {
        if (!part.contains(key::part::gpus) || !part[key::part::gpus].is_array()) continue;
        for (const auto& g : part[key::part::gpus]) {
            GpmActivity a{number(g, key::gpu::gpm_sm_avg), number(g, key::gpu::gpm_tensor_avg), number(g, key::gpu::gpm_dram_bw_avg)};
            if (a.sm || a.tensor || a.dram) out[{newest.job_id, node, static_cast<int>(integer(g, key::gpu::id).value_or(0))}] = a;
        }
    }
}

std::map<GpmKey, GpmActivity> gpm_from_accounting(std::span<const slurm::AccountedRun> runs) {
    std::map<GpmKey, GpmActivity> out;
    each_job(runs, [&](auto job) { add_gpm(*job.back(), out); });
    return out;
}

}  // namespace acme::acct
