// --detail: each job listed as jobstats shows it (acct/gpuacct/core/job_detail.hpp), from the
// same Context the table views read, plus the GPM activity and slurmdbd's time limit.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "acct/gpuacct/core/aggregate.hpp"
#include "acct/gpuacct/core/job_states.hpp"
#include "acct/gpuacct/views.hpp"
#include "common/diagnose/diagnosis_json.hpp"

namespace acme::gpuacct {

std::vector<record::NodeWork> node_work(const Context& context, std::int64_t job_id) {
    struct Sums {
        double util = 0, sm = 0;
        int n_util = 0, n_sm = 0, gpus = 0;
    };
    std::map<std::string, Sums> by_node;
    for (const auto& s : context.data.summaries) {
        if (s.job_id != job_id) continue;
        Sums& n = by_node[s.node];
        ++n.gpus;
        if (s.samples > 0 && s.util_avg) {
            n.util += *s.util_avg;
            ++n.n_util;
        }
        if (const auto m = context.gpm.find({job_id, s.node, s.gpu}); m != context.gpm.end() && m->second.sm) {
            n.sm += *m->second.sm;
            ++n.n_sm;
        }
    }
    std::vector<record::NodeWork> out;
    for (const auto& [node, n] : by_node) {
        record::NodeWork w{node, std::nullopt, std::nullopt};
        if (n.n_util) w.util = n.util / n.n_util;
        if (n.n_sm == n.gpus && n.n_sm) w.sm = n.sm / n.n_sm;
        out.push_back(std::move(w));
    }
    return out;
}

std::vector<acct::DetailStall> job_stalls(const Context& context, std::int64_t job_id) {
    // Every node's sampler records its own verdict of a run; the one that acted (signalled,
    // withdrew) says most, else the newest.
    std::map<std::int64_t, const acct::Stall*> per_run;
    for (const auto& s : context.data.stalls) {
        if (s.job_id != job_id) continue;
        const acct::Stall*& best = per_run[s.restart];
        const bool acted = s.action != "none", best_acted = best && best->action != "none";
        if (!best || (acted && !best_acted) || (acted == best_acted && s.ts > best->ts)) best = &s;
    }
    std::vector<acct::DetailStall> out;
    for (const auto& [restart, s] : per_run)
        out.push_back({restart, s->ts, s->since, s->named, s->hardware, s->withdrawn, s->evidence, s->action});
    return out;
}

// The failed run's diagnosis, as the table's Reason picks it, with its evidence lines; and what
// recovery did: the nodes drained for the job, the requeues.
void add_failure(const Context& context, const acct::Job& job, const std::vector<const acct::Diagnosis*>* of_job, acct::JobDetail& d) {
    const acct::Diagnosis* f = of_job ? acct::final_diagnosis(job, *of_job) : nullptr;
    // A job that completed after a requeue keeps none (as the table).
    if (f && !acct::state_is_failure(job.state) && f->restart >= job.restarts) f = nullptr;
    if (f) {
        acct::DetailFailure failure{f->node, f->category, f->reason, f->action, f->rule, f->confidence, f->restart, {}};
        for (const auto& e : diagnose::evidence_from_json(f->evidence_json))
            failure.evidence.push_back(e.line > 0 ? fmt::format("line {}: {}", e.line, e.text)
                                                  : fmt::format("{}{}", e.text, e.source.empty() ? "" : " (" + e.source + ")"));
        d.failure = std::move(failure);
    }
    for (const auto& drain : context.data.drains)
        if (drain.job_id == job.job_id)
            d.recovery.push_back(fmt::format("node {} drained{}", drain.node, drain.reason.empty() ? "" : ": " + drain.reason));
    if (job.restarts > 0) d.recovery.push_back(fmt::format("requeued {} time{}", job.restarts, job.restarts == 1 ? "" : "s"));
}

std::string render_details(const Context& context, const acct::DetailThresholds& thresholds) {
    std::string out;
    const auto diagnoses = acct::diagnoses_by_job(context.data.diagnoses);
    for (const auto& job : context.jobs) {
        const acct::JobText& text = job.text();
        acct::JobDetail d;
        d.job_id = job.job_id;
        d.name = text.name;
        d.user = text.user;
        d.account = text.account;
        d.partition = text.partition;
        d.state = job.state;
        d.job_type = job.job_type;
        d.nodelist = text.nodelist;
        if (d.nodelist.empty())
            for (const auto& n : job.nodes) d.nodelist += (d.nodelist.empty() ? "" : ",") + n.node;
        d.submit = job.submit;
        d.start = job.start;
        d.end = job.end;
        d.elapsed_s = acct::job_elapsed(job, context.now);
        d.alloc_gpus = acct::job_gpus(job);
        d.telemetry_error = text.telemetry_error;
        if (const auto a = context.accounted.find(job.job_id); a != context.accounted.end()) {
            d.time_limit_s = a->second.time_limit_s;
            d.time_limit_unlimited = a->second.unlimited;
        }
        for (const auto& s : context.data.summaries) {
            if (s.job_id != job.job_id) continue;
            acct::DetailGpu g;
            g.node = s.node;
            g.gpu = s.gpu;
            g.samples = s.samples;
            g.xids = s.xids;
            g.util_avg = s.util_avg;
            g.util_max = s.util_max;
            if (s.power_avg_mw) g.power_avg_w = *s.power_avg_mw / 1000;
            if (s.power_max_mw) g.power_max_w = static_cast<double>(*s.power_max_mw) / 1000;
            if (s.energy_mj) g.energy_j = static_cast<double>(*s.energy_mj) / 1000;
            g.mem_max = s.mem_max;
            g.mem_total = s.mem_total;
            g.verdict = s.verdict;
            if (const auto m = context.gpm.find({job.job_id, s.node, s.gpu}); m != context.gpm.end()) {
                g.gpm_sm = m->second.sm;
                g.gpm_tensor = m->second.tensor;
                g.gpm_dram = m->second.dram;
            }
            d.gpus.push_back(std::move(g));
        }
        std::sort(d.gpus.begin(), d.gpus.end(),
                  [](const acct::DetailGpu& a, const acct::DetailGpu& b) { return std::tie(a.node, a.gpu) < std::tie(b.node, b.gpu); });
        d.stalls = job_stalls(context, job.job_id);
        // A requeued job's nodes may report from different runs (a spool keeps each node's last
        // run): no scores, rather than one run's nodes scored against another's.
        if (job.restarts == 0) d.slowness = record::straggler_scores(node_work(context, job.job_id));
        for (const auto& e : context.data.events) {
            if (!e.job_id || *e.job_id != job.job_id) continue;
            if (e.kind == "xid") d.xids.push_back({e.node, e.gpu, e.ts, e.code});
            if (e.kind == "idle_alert" || e.kind == "idle_cancel")
                d.idle.push_back({e.node, e.gpu, e.ts, e.code, e.kind == "idle_cancel"});
        }
        const auto of_job = diagnoses.find(job.job_id);
        add_failure(context, job, of_job == diagnoses.end() ? nullptr : &of_job->second, d);
        if (!out.empty()) out += '\n';
        out += acct::render_detail(d, thresholds);
    }
    return out;
}

}  // namespace acme::gpuacct
