#include "acct/gpuacct/core/aggregate.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <tuple>

#include "acct/gpuacct/core/job_states.hpp"
#include "common/slurm/job_type.hpp"
#include "common/diagnose/taxonomy.hpp"

namespace acme::acct {
namespace {

bool any_of_or_empty(const std::vector<std::string>& wanted, const std::string& value) {
    return wanted.empty() || std::find(wanted.begin(), wanted.end(), value) != wanted.end();
}

// The taxonomy's position of a reason: Table 3 order, unknown (and anything not in it) last.
size_t reason_rank(const std::string& reason) {
    const auto all = diagnose::reasons();
    for (size_t i = 0; i < all.size(); ++i)
        if (all[i].name == reason) return i;
    return all.size();
}

size_t category_rank(const std::string& category) {
    constexpr std::array order = {"infrastructure", "framework", "script", "unknown"};
    for (size_t i = 0; i < order.size(); ++i)
        if (category == order[i]) return i;
    return order.size();
}

}  // namespace

bool matches(const Job& job, const JobFilter& f) {
    const JobText& text = job.text();
    if (!any_of_or_empty(f.users, text.user) || !any_of_or_empty(f.accounts, text.account) ||
        !any_of_or_empty(f.partitions, text.partition) || !any_of_or_empty(f.types, job.job_type))
        return false;
    if (f.states.empty()) return true;
    return std::any_of(f.states.begin(), f.states.end(), [&](const std::string& s) { return state_is(job.state, s); });
}

int job_gpus(const Job& job) { return job.gpus_total > 0 ? job.gpus_total : job.gpu_ids; }

double job_elapsed(const Job& job, double now) {
    if (!(job.start > 0)) return 0;
    const double end = job.end > 0 ? job.end : now;
    return end > job.start ? end - job.start : 0;
}

double job_gpu_hours(const Job& job, double now) { return job_gpus(job) * job_elapsed(job, now) / 3600.0; }

std::unordered_map<std::int64_t, GpuUse> gpu_use_by_job(std::span<const GpuSummary> summaries) {
    struct Acc {
        GpuUse use;
        double util_sum = 0;
        int with_util = 0, idle = 0, ok = 0;
        double power_sum = 0;
        int with_power = 0;
    };
    std::unordered_map<std::int64_t, Acc> acc;
    for (const auto& s : summaries) {
        auto& a = acc[s.job_id];
        a.use.gpus++;
        a.use.samples += s.samples;
        a.use.xids += s.xids;
        if (s.samples == 0 || s.verdict == "no-data") continue;
        if (s.util_avg) {
            a.util_sum += *s.util_avg;
            a.with_util++;
        }
        if (s.util_max) a.use.util_max = std::max(a.use.util_max.value_or(0), *s.util_max);
        if (s.mem_max && *s.mem_max >= a.use.mem_max.value_or(-1)) {
            a.use.mem_max = s.mem_max;
            a.use.mem_total = s.mem_total;
        }
        if (s.energy_mj) a.use.energy_j = a.use.energy_j.value_or(0) + static_cast<double>(*s.energy_mj) / 1000.0;
        if (s.power_avg_mw) {
            a.power_sum += *s.power_avg_mw / 1000.0;
            a.with_power++;
        }
        if (s.power_max_mw) a.use.power_max_w = std::max(a.use.power_max_w.value_or(0), static_cast<double>(*s.power_max_mw) / 1000.0);
        if (s.temp_max) a.use.temp_max = std::max(a.use.temp_max.value_or(0), *s.temp_max);
        a.idle += s.verdict == "idle";
        a.ok += s.verdict == "ok";
    }
    std::unordered_map<std::int64_t, GpuUse> out;
    for (auto& [job, a] : acc) {
        if (a.with_util) a.use.util_avg = a.util_sum / a.with_util;
        if (a.with_power) a.use.power_avg_w = a.power_sum / a.with_power;
        const int with_data = a.with_util;
        if (with_data == 0) a.use.verdict = "no-data";
        else if (a.ok == with_data) a.use.verdict = "ok";
        else if (a.idle == with_data) a.use.verdict = "idle";
        else a.use.verdict = "low-util";
        out.emplace(job, a.use);
    }
    return out;
}

std::unordered_map<std::int64_t, std::vector<const Diagnosis*>> diagnoses_by_job(std::span<const Diagnosis> all) {
    std::unordered_map<std::int64_t, std::vector<const Diagnosis*>> out;
    for (const auto& d : all) out[d.job_id].push_back(&d);
    return out;
}

const Diagnosis* final_diagnosis(const Job& job, std::span<const Diagnosis* const> of_job) {
    const Diagnosis* best = nullptr;
    for (const Diagnosis* d : of_job) {
        if (!best || d->restart > best->restart) {
            best = d;
            continue;
        }
        if (d->restart < best->restart) continue;
        if (d->confidence > best->confidence || (d->confidence == best->confidence && d->node == job.batch_host)) best = d;
    }
    return best;
}

std::unordered_map<std::int64_t, std::vector<const TaskExit*>> task_exits_by_job(std::span<const TaskExit> all) {
    std::unordered_map<std::int64_t, std::vector<const TaskExit*>> out;
    for (const auto& t : all) out[t.job_id].push_back(&t);
    return out;
}

std::vector<StepRow> job_steps(std::span<const TaskExit* const> exits) {
    // Slurm's special step ids (slurm.h): batch 0xfffffffb, extern 0xfffffffc, interactive 0xfffffffa.
    auto name = [](std::int64_t id) -> std::string {
        if (id == 0xfffffffbLL) return "batch";
        if (id == 0xfffffffcLL) return "extern";
        if (id == 0xfffffffaLL) return "interactive";
        return std::to_string(id);
    };
    std::map<std::int64_t, std::vector<const TaskExit*>> by_step;
    for (const TaskExit* t : exits) by_step[t->step_id].push_back(t);
    std::vector<StepRow> out;
    for (const auto& [id, tasks] : by_step) {
        StepRow row;
        row.step = name(id);
        const TaskExit* worst = tasks.front();
        std::vector<std::string> nodes;
        for (const TaskExit* t : tasks) {
            if (std::make_pair(t->signal, t->exit_code) > std::make_pair(worst->signal, worst->exit_code)) worst = t;
            if (std::find(nodes.begin(), nodes.end(), t->node) == nodes.end()) nodes.push_back(t->node);
            row.end = std::max(row.end, t->ts);
        }
        row.state = worst->signal ? "CANCELLED" : worst->exit_code ? "FAILED" : "COMPLETED";
        row.exit_code = std::to_string(worst->exit_code) + ":" + std::to_string(worst->signal);
        for (const auto& n : nodes) row.nodes += (row.nodes.empty() ? "" : ",") + n;
        out.push_back(std::move(row));
    }
    return out;
}

void FailureAggregator::count(const std::string& category, const std::string& reason, int gpus, double run_s) {
    auto it = by_reason_.find(reason);
    if (it == by_reason_.end()) it = by_reason_.emplace(reason, Reason{}).first;
    it->second.category = category;
    it->second.runs.push_back({gpus, run_s});
}

void FailureAggregator::add(const Job& job, std::span<const Diagnosis> of_job) {
    of_job_.clear();
    for (const Diagnosis& d : of_job) of_job_.push_back(&d);
    add(job, std::span<const Diagnosis* const>(of_job_));
}

void FailureAggregator::add(const Job& job, std::span<const Diagnosis* const> of_job) {
    const int gpus = job_gpus(job);
    // One failure per run: every diagnosed restart before the last (it was requeued, so it
    // failed), and the last run when the job ended badly. The runs are the diagnoses grouped by
    // restart; the stable sort keeps the nodes' order within a run for final_diagnosis.
    runs_.assign(of_job.begin(), of_job.end());
    const auto by_restart = [](const Diagnosis* a, const Diagnosis* b) { return a->restart < b->restart; };
    if (!std::is_sorted(runs_.begin(), runs_.end(), by_restart)) std::stable_sort(runs_.begin(), runs_.end(), by_restart);
    const std::int64_t last = runs_.empty() ? job.restarts : std::max<std::int64_t>(job.restarts, runs_.back()->restart);
    const Diagnosis* final_run = nullptr;
    double previous = job.submit;
    for (auto run = runs_.begin(); run != runs_.end();) {
        const auto run_end = std::find_if(run, runs_.end(), [&](const Diagnosis* d) { return d->restart != (*run)->restart; });
        const Diagnosis* d = final_diagnosis(job, std::span<const Diagnosis* const>(&*run, static_cast<size_t>(run_end - run)));
        if ((*run)->restart == last) {
            final_run = d;
            break;
        }
        // An earlier run's own start is not recorded: it ran at most since the previous failure.
        count(d->category, d->reason, gpus, previous > 0 && d->ts > previous ? d->ts - previous : 0);
        previous = d->ts;
        run = run_end;
    }
    if (!state_is_failure(job.state)) return;
    if (final_run) count(final_run->category, final_run->reason, gpus, job_elapsed(job, now_));
    // A cancellation nobody diagnosed is a user's choice, not a failure (the paper counts them apart).
    else if (!state_is(job.state, "CANCELLED")) count("unknown", "unknown", gpus, job_elapsed(job, now_));
}

void FailureAggregator::append(FailureAggregator&& later) {
    for (auto& [name, theirs] : later.by_reason_) {
        Reason& mine = by_reason_[name];
        mine.category = std::move(theirs.category);
        mine.runs.insert(mine.runs.end(), theirs.runs.begin(), theirs.runs.end());
    }
}

std::vector<FailureRow> FailureAggregator::rows() {
    std::vector<FailureRow> out;
    double total = 0;
    for (const auto& [name, reason] : by_reason_) {
        FailureRow row{reason.category, name};
        double gpu_sum = 0;
        std::vector<double> ttf;
        ttf.reserve(reason.runs.size());
        for (const Run& run : reason.runs) {
            gpu_sum += run.gpus;
            row.gpu_hours += run.gpus * run.seconds / 3600.0;
            ttf.push_back(run.seconds);
        }
        row.num = static_cast<std::int64_t>(reason.runs.size());
        row.gpu_demand = row.num ? gpu_sum / static_cast<double>(row.num) : 0;
        row.ttf_median_s = median(std::move(ttf));
        total += row.gpu_hours;
        out.push_back(std::move(row));
    }
    for (auto& row : out) row.gpu_time_pct = total > 0 ? 100.0 * row.gpu_hours / total : 0;
    std::sort(out.begin(), out.end(), [](const FailureRow& a, const FailureRow& b) {
        const auto ka = std::make_pair(category_rank(a.category), reason_rank(a.reason));
        const auto kb = std::make_pair(category_rank(b.category), reason_rank(b.reason));
        return ka != kb ? ka < kb : a.reason < b.reason;
    });
    return out;
}

std::vector<FailureRow> aggregate_failures(std::span<const Job> jobs, std::span<const Diagnosis> diagnoses, double now) {
    const auto by_job = diagnoses_by_job(diagnoses);
    FailureAggregator failures(now);
    for (const auto& job : jobs) {
        const auto it = by_job.find(job.job_id);
        failures.add(job, it == by_job.end() ? std::span<const Diagnosis* const>() : std::span<const Diagnosis* const>(it->second));
    }
    return failures.rows();
}

std::vector<NodeRow> aggregate_nodes(std::span<const std::string> nodes, std::span<const Job> jobs,
                                     std::span<const Diagnosis> diagnoses, std::span<const GpuEvent> events,
                                     std::span<const Drain> drains, std::span<const HealthCheck> health) {
    std::map<std::string, NodeRow> rows;
    for (const auto& n : nodes) rows[n].node = n;
    for (const auto& job : jobs)
        for (const auto& n : job.nodes) {
            auto& row = rows[n.node];
            row.node = n.node;
            row.jobs++;
        }
    // A node is blamed for a failure only by its own diagnosis of it (its GPU events decided it).
    std::map<std::tuple<std::string, std::int64_t, std::int64_t>, bool> failed_runs;
    for (const auto& d : diagnoses) {
        auto& infra = failed_runs[{d.node, d.job_id, d.restart}];
        infra = infra || d.category == "infrastructure";
    }
    for (const auto& [key, infra] : failed_runs) {
        auto& row = rows[std::get<0>(key)];
        row.node = std::get<0>(key);
        row.failures++;
        row.infra_failures += infra;
    }
    for (const auto& e : events) {
        auto& row = rows[e.node];
        row.node = e.node;
        if (e.kind == "xid") row.xids++;
        else if (e.kind == "ecc_sbe") row.ecc_sbe += std::max<std::int64_t>(e.code, 1);
        else if (e.kind == "ecc_dbe") row.ecc_dbe += std::max<std::int64_t>(e.code, 1);
        else if (e.kind == "gpu_lost") row.gpu_lost++;
        row.last_event = std::max(row.last_event.value_or(0), e.ts);
    }
    for (const auto& d : drains) {
        auto& row = rows[d.node];
        row.node = d.node;
        row.drains++;
    }
    for (const auto& h : health) {
        auto& row = rows[h.node];
        row.node = h.node;
        if (h.ts < row.last_health_ts) continue;
        row.last_health_ts = h.ts;
        row.last_health = h.passed ? "pass" : "FAIL: " + h.detail;
    }
    std::vector<NodeRow> out;
    for (auto& [_, row] : rows) out.push_back(std::move(row));
    return out;
}

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    const size_t mid = values.size() / 2;
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
    const double upper = values[mid];
    if (values.size() % 2) return upper;
    const double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
    return (lower + upper) / 2;
}

namespace {

// Groups are found by index, not by a keyed map: add runs once per job of six months.
constexpr std::array<std::pair<int, const char*>, 6> kBuckets = {
    {{1, "1"}, {4, "2-4"}, {8, "5-8"}, {64, "9-64"}, {256, "65-256"}, {1 << 30, "257+"}}};

size_t bucket_of(int gpus) {
    size_t bucket = 0;
    while (gpus > kBuckets[bucket].first) ++bucket;
    return bucket;
}

// The median of values[begin, end), selected in place as median() does.
double median_in_place(std::vector<double>& values, size_t begin, size_t end) {
    if (begin == end) return 0;
    const auto first = values.begin() + static_cast<std::ptrdiff_t>(begin);
    const auto last = values.begin() + static_cast<std::ptrdiff_t>(end);
    const auto mid = first + static_cast<std::ptrdiff_t>((end - begin) / 2);
    std::nth_element(first, mid, last);
    return (end - begin) % 2 ? *mid : (*std::max_element(first, mid) + *mid) / 2;
}

struct Medians {
    std::vector<double> duration, queue, gpus;  // per group
};

// Room for one dimension's values, reused from one dimension to the next.
struct Scratch {
    std::vector<std::uint32_t> group;
    std::vector<double> duration, queue, gpus;
};

// One dimension's medians: durations and queue times of the started jobs, GPUs of all. Its
// groups split the samples (each is in one); one pass lays each group's values out in one
// range (a counting sort), where its median is selected.
template <typename Sample, typename GroupOf>
Medians medians_by_group(std::span<const Sample> samples, size_t groups, GroupOf group_of, Scratch& scratch) {
    auto& [group, duration, queue, gpus] = scratch;
    group.resize(samples.size());
    std::vector<size_t> all(groups + 1), started(groups + 1);  // each group's first index
    for (size_t i = 0; i < samples.size(); ++i) {
        const auto g = group[i] = static_cast<std::uint32_t>(group_of(samples[i]));
        ++all[g + 1];
        started[g + 1] += samples[i].started;
    }
    for (size_t g = 0; g < groups; ++g) {
        all[g + 1] += all[g];
        started[g + 1] += started[g];
    }
    duration.resize(started[groups]);
    queue.resize(started[groups]);
    gpus.resize(samples.size());
    std::vector<size_t> next_all(all.begin(), all.end() - 1), next_started(started.begin(), started.end() - 1);
    for (size_t i = 0; i < samples.size(); ++i) {
        const auto g = group[i];
        gpus[next_all[g]++] = samples[i].gpus;
        if (!samples[i].started) continue;
        duration[next_started[g]] = samples[i].duration;
        queue[next_started[g]++] = samples[i].queue;
    }
    Medians out;
    for (size_t g = 0; g < groups; ++g) {
        out.duration.push_back(median_in_place(duration, started[g], started[g + 1]));
        out.queue.push_back(median_in_place(queue, started[g], started[g + 1]));
        out.gpus.push_back(median_in_place(gpus, all[g], all[g + 1]));
    }
    return out;
}

}  // namespace

void SummaryAggregator::add(const Job& job) {
    const int gpus = job_gpus(job);
    if (gpus <= 0) return;
    Sample sample;
    sample.gpus = gpus;
    sample.started = job.start > 0;
    sample.duration = job_elapsed(job, now_);
    sample.queue = job.start > 0 && job.submit > 0 && job.start > job.submit ? job.start - job.submit : 0;
    const auto types = job_types();
    static const auto other = static_cast<std::uint8_t>(std::find(types.begin(), types.end(), "other") - types.begin());
    sample.type = other;
    for (size_t i = 0; i < types.size(); ++i)
        if (types[i] == job.job_type) {
            sample.type = static_cast<std::uint8_t>(i);
            break;
        }
    std::string_view state = std::string_view(job.state).substr(0, job.state.find(' '));
    if (state.empty()) state = "UNKNOWN";
    while (sample.state < states_.size() && states_[sample.state] != state) ++sample.state;
    if (sample.state == states_.size()) states_.emplace_back(state);
    samples_.push_back(sample);
}

void SummaryAggregator::append(SummaryAggregator&& later) {
    // Their state numbers become ours; states new to us keep their order of first appearance.
    std::vector<std::uint32_t> ours;
    for (const auto& state : later.states_) {
        const auto it = std::find(states_.begin(), states_.end(), state);
        ours.push_back(static_cast<std::uint32_t>(it - states_.begin()));
        if (it == states_.end()) states_.push_back(state);
    }
    samples_.reserve(samples_.size() + later.samples_.size());
    for (Sample sample : later.samples_) {
        sample.state = ours[sample.state];
        samples_.push_back(sample);
    }
}

std::vector<SummaryRow> SummaryAggregator::rows() {
    const auto types = job_types();
    std::vector<SummaryRow> all{{"all", "all"}}, by_type, by_state, by_bucket;
    for (const auto type : types) by_type.push_back({"type", std::string(type)});
    for (const auto& state : states_) by_state.push_back({"state", state});
    for (const auto& [_, name] : kBuckets) by_bucket.push_back({"gpus", name});
    // Sums in job order, as the jobs came.
    double total_gpu_h = 0;
    for (const Sample& s : samples_) {
        const double gpu_h = s.gpus * s.duration / 3600.0;
        for (SummaryRow* row : {&all[0], &by_type[s.type], &by_state[s.state], &by_bucket[bucket_of(s.gpus)]}) {
            row->jobs++;
            row->gpu_hours += gpu_h;
        }
        total_gpu_h += gpu_h;
    }
    const std::span<const Sample> samples(samples_);
    const auto total_jobs = static_cast<double>(samples_.size());
    Scratch scratch;
    // One dimension's shares and medians, given which of its rows a sample counts in.
    const auto finish = [&](std::vector<SummaryRow>& rows, auto group_of) {
        const Medians medians = medians_by_group(samples, rows.size(), group_of, scratch);
        for (size_t g = 0; g < rows.size(); ++g) {
            SummaryRow& row = rows[g];
            row.jobs_pct = total_jobs > 0 ? 100.0 * static_cast<double>(row.jobs) / total_jobs : 0;
            row.gpu_time_pct = total_gpu_h > 0 ? 100.0 * row.gpu_hours / total_gpu_h : 0;
            row.duration_median_s = medians.duration[g];
            row.queue_median_s = medians.queue[g];
            row.gpus_median = medians.gpus[g];
        }
    };
    finish(all, [](const Sample&) { return size_t{0}; });
    finish(by_type, [](const Sample& s) { return size_t{s.type}; });
    finish(by_state, [](const Sample& s) { return size_t{s.state}; });
    finish(by_bucket, [](const Sample& s) { return bucket_of(s.gpus); });
    // The paper's state shares: by count, most common first, between types and GPU counts.
    std::stable_sort(by_state.begin(), by_state.end(), [](const SummaryRow& a, const SummaryRow& b) { return a.jobs > b.jobs; });
    std::vector<SummaryRow> out = std::move(all);
    for (auto* rows : {&by_type, &by_state, &by_bucket}) out.insert(out.end(), rows->begin(), rows->end());
    return out;
}

std::vector<SummaryRow> aggregate_summary(std::span<const Job> jobs, double now) {
    SummaryAggregator summary(now);
    for (const auto& job : jobs) summary.add(job);
    return summary.rows();
}

}  // namespace acme::acct
