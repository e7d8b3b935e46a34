#include "evalsched/core/decisions.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace acme::evalsched {

bool retries(const std::string& category, int failed_runs, int max_attempts) {
    return (category == "infrastructure" || category == "unknown") && failed_runs < max_attempts;
}

std::string node_to_avoid(const std::string& category, const std::string& node) {
    return category == "infrastructure" ? node : std::string();
}

bool contains_node(const std::string& list, const std::string& node) {
    return (',' + list + ',').find(',' + node + ',') != std::string::npos;
}

Plan plan_round(std::span<const PendingTrial> trials, const std::map<std::string, std::string>& avoid,
                std::vector<NodeWindow> windows, const PlanOptions& options) {
    Plan out;
    std::map<std::string, const PendingTrial*> by_id;
    for (const auto& t : trials) by_id[t.id] = &t;
    auto take = [&](const Plan& p) {
        for (const auto& placement : p.submit) {
            auto w = std::find_if(windows.begin(), windows.end(), [&](const NodeWindow& n) { return n.node == placement.node; });
            if (w != windows.end()) {
                w->free_gpus = std::max(0, w->free_gpus - placement.gpus);
                w->staged.push_back(by_id.at(placement.trial)->checkpoint);
            }
            out.submit.push_back(placement);
        }
        out.hold.insert(out.hold.end(), p.hold.begin(), p.hold.end());
    };
    std::vector<PendingTrial> free_to_place;
    for (const auto& t : trials) {
        auto it = avoid.find(t.id);
        if (it == avoid.end() || it->second.empty()) {
            free_to_place.push_back(t);
            continue;
        }
        std::vector<NodeWindow> allowed;
        for (const auto& w : windows)
            if (!contains_node(it->second, w.node)) allowed.push_back(w);
        take(plan(std::span(&t, 1), allowed, options));
    }
    const Plan rest = plan(free_to_place, windows, options);
    take(rest);
    out.lower_bound_s = rest.lower_bound_s;
    out.total_work_gpu_s = rest.total_work_gpu_s;
    out.usable_gpus = rest.usable_gpus;
    return out;
}

MetricDecision decide_metric(const std::vector<TrialProgress>& trials) {
    MetricDecision d;
    for (const auto& t : trials)
        if (t.state == "failed") {
            d.kind = MetricDecision::Kind::give_up;
            d.state = "failed";
            d.reason = fmt::format("inference failed: {}{}", t.key, t.reason.empty() ? "" : " (" + t.reason + ")");
            return d;
        }
    for (const auto& t : trials)
        if (t.state == "cancelled") {
            d.kind = MetricDecision::Kind::give_up;
            d.state = "cancelled";
            d.reason = "inference cancelled: " + t.key;
            return d;
        }
    for (const auto& t : trials) {
        if (t.state == "done") continue;
        if ((t.state == "queued" || t.state == "running") && t.job_id) {
            d.after.push_back(*t.job_id);
            continue;
        }
        d.after.clear();
        return d;  // a trial still to be placed (or being submitted): nothing to chain to yet
    }
    d.kind = MetricDecision::Kind::submit;
    return d;
}

double metric_time_min_s(double estimate_s) { return 2 * std::max(0.0, estimate_s) + 120; }

double metric_time_limit_s(double estimate_s) { return std::max(metric_time_min_s(estimate_s), 300.0); }

}  // namespace acme::evalsched
