#include "common/recovery/recovery_policy.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/diagnose/llm_client.hpp"

namespace acme::recovery {

Plan plan(const Inputs& in) {
    Plan p;
    const auto& d = in.diagnosis;
    if (diagnose::from_model(d)) {
        p.why = fmt::format("{}/{} is the answer of model {}, not of a rule: recovery acts on rules only (not drained, "
                            "not requeued)", diagnose::to_string(d.category), d.reason, diagnose::model_name(d));
        return p;
    }
    if (d.category != diagnose::Category::infrastructure) {
        p.why = fmt::format("{} failure ({}): not requeued, it would fail again", diagnose::to_string(d.category),
                            d.reason);
        return p;
    }
    // Hardware evidence on this node: an event on one of the job's GPUs here.
    const diagnose::GpuEvent* culprit = nullptr;
    for (const auto& e : in.gpu_events) {
        const bool job_gpu =
            in.job_gpus.empty() || std::find(in.job_gpus.begin(), in.job_gpus.end(), e.gpu) != in.job_gpus.end();
        if (!job_gpu) continue;
        const bool bad = e.kind == "gpu_lost" || e.kind == "ecc_dbe" || (e.kind == "xid" && e.code && in.xids.drains(*e.code));
        if (bad && !culprit) culprit = &e;
    }
    if (culprit) {
        p.drain = true;
        p.drain_reason = culprit->kind == "xid"
                             ? fmt::format("acme: {} XID {} on GPU {}", d.reason, culprit->code.value_or(0), culprit->gpu)
                             : fmt::format("acme: {} ({}) on GPU {}", d.reason, culprit->kind, culprit->gpu);
    } else if (in.gpucheck_healthy && !*in.gpucheck_healthy) {
        p.drain = true;
        p.drain_reason = in.stall_named_here.empty() ? fmt::format("acme: {}; gpucheck failed: {}", d.reason, in.gpucheck_detail)
                                                     : fmt::format("acme: {}: {}; gpucheck failed: {}", d.reason, in.stall_named_here, in.gpucheck_detail);
    }
    if (p.drain && in.drain_per_user > 0 && in.drained_by_uid >= in.drain_per_user) {
        // Evidence or not, one user's jobs never take more than this many nodes out of service:
        // past it a person decides (the reason stays in the diagnosis and the recovery row).
        p.drain = false;
        p.why_not_drained = fmt::format("uid {}'s jobs already hold {} nodes drained (drain_per_user={}): not drained ({}), an admin decides",
                                        in.uid, in.drained_by_uid, in.drain_per_user, p.drain_reason);
        p.drain_reason.clear();
        p.avoid_node = true;
    }
    std::string where = p.drain ? fmt::format("drained ({})", p.drain_reason)
                      : !p.why_not_drained.empty() ? p.why_not_drained
                                : in.gpucheck_healthy ? std::string("gpucheck found this node healthy: not drained")
                                                      : std::string("no hardware evidence on this node: not drained");
    if (!p.drain && !in.stall_named_here.empty()) {
        p.avoid_node = true;
        where = fmt::format("the stall verdict named this node ({}), which the job itself can cause; {}; the requeued job avoids it",
                            in.stall_named_here, where);
    }
    if (in.restarts >= in.max_restarts) {
        p.why = fmt::format("infrastructure failure ({}); {}; restart cap reached ({} of {}): not requeued", d.reason,
                            where, in.restarts, in.max_restarts);
        return p;
    }
    p.requeue = true;
    p.why = fmt::format("infrastructure failure ({}); {}; requeued (restart {} of {})", d.reason, where,
                        in.restarts + 1, in.max_restarts);
    return p;
}

std::string drain_owner_tag(long long job, long long uid) { return fmt::format(" (job {} uid {})", job, uid); }

int drains_by_uid(const std::vector<std::string>& reasons, long long uid) {
    const std::string tag = fmt::format(" uid {})", uid);
    int n = 0;
    for (const auto& r : reasons)
        if (r.starts_with("acme: ") && r.ends_with(tag)) ++n;
    return n;
}

}  // namespace acme::recovery
