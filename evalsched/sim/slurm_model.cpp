#include "evalsched/sim/slurm_model.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace acme::evalsched::sim {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
// bf_max_job_test's default: pending jobs beyond it get no reservation.
constexpr std::size_t kMaxJobTest = 500;
}  // namespace

SlurmModel::SlurmModel(int nodes, int gpus_per_node)
    : gpn_(gpus_per_node), free_(static_cast<std::size_t>(nodes), gpus_per_node), bg_fence_(static_cast<std::size_t>(nodes), kInf) {}

int SlurmModel::submit(JobSpec spec) {
    const int id = next_id_++;
    pending_.emplace(id, std::move(spec));
    return id;
}

int SlurmModel::total_free_gpus() const { return std::accumulate(free_.begin(), free_.end(), 0); }

double SlurmModel::free_at(int node, int gpus, double now) const {
    int free = free_[static_cast<std::size_t>(node)];
    if (free >= gpus) return now;
    std::vector<std::pair<double, int>> releases;
    for (const auto& [id, r] : running_)
        for (int n : r.nodes)
            if (n == node) releases.emplace_back(r.limit_end, r.spec.gpus_per_node);
    std::sort(releases.begin(), releases.end());
    for (const auto& [t, g] : releases) {
        free += g;
        if (free >= gpus) return std::max(t, now);
    }
    return kInf;
}

void SlurmModel::start(int id, JobSpec spec, std::vector<int> nodes, double now, std::vector<Started>& out) {
    for (int n : nodes) free_[static_cast<std::size_t>(n)] -= spec.gpus_per_node;
    if (!spec.eval) background_gpus_ += spec.gpus_per_node * static_cast<int>(nodes.size());
    // Backfill grants a job exactly its --time-min, even where its --time would fit before the
    // next reservation: what Slurm 22.05 does (on the minicluster, --time-min=1 --time=2 with
    // the next reservation 5 minutes away ran with 1:00). The main scheduler (time_min cleared
    // by schedule()) grants --time.
    if (spec.time_min > 0) spec.time_limit = spec.time_min;
    // Background durations come from the trace and already hold their own launch cost.
    const double launch = spec.eval ? std::min(launch_s_, spec.time_limit) : 0;
    double run = 0;
    if (spec.on_granted) run = launch + spec.on_granted(now + launch, nodes.front(), id, spec.time_limit - launch);
    else if (spec.on_start) run = launch + spec.on_start(now + launch, nodes.front());
    const bool timed_out = run > spec.time_limit;
    Running r{std::move(spec), std::move(nodes), now, 0};
    r.limit_end = now + r.spec.time_limit;
    out.push_back({id, now + std::min(run, r.spec.time_limit), timed_out});
    running_.emplace(id, std::move(r));
}

std::vector<Started> SlurmModel::schedule(double now, bool backfill) {
    std::vector<Started> out;
    const int n_nodes = nodes();
    std::vector<double> fence(static_cast<std::size_t>(n_nodes), kInf);
    if (backfill) std::fill(bg_fence_.begin(), bg_fence_.end(), kInf);

    std::vector<std::pair<double, int>> order;
    for (const auto& [id, spec] : pending_) order.emplace_back(spec.priority_time, id);
    std::sort(order.begin(), order.end());

    std::size_t tested = 0;
    for (const auto& [prio, id] : order) {
        if (++tested > kMaxJobTest) break;
        JobSpec& spec = pending_.at(id);
        auto fits_now = [&](int n, int gpus) {
            const double limit = backfill && spec.time_min > 0 ? spec.time_min : spec.time_limit;
            return free_[static_cast<std::size_t>(n)] >= gpus && now + limit <= fence[static_cast<std::size_t>(n)];
        };
        std::vector<int> chosen;
        if (spec.nodes > 1) {
            for (int n = 0; n < n_nodes && static_cast<int>(chosen.size()) < spec.nodes; ++n)
                if (fits_now(n, gpn_)) chosen.push_back(n);
            if (static_cast<int>(chosen.size()) < spec.nodes) chosen.clear();
        } else {
            // Best fit: the node with the fewest free GPUs that still fits (cons_tres packs).
            int best = -1;
            for (int n = 0; n < n_nodes; ++n) {
                if (spec.pinned_node && *spec.pinned_node != n) continue;
                if (!fits_now(n, spec.gpus_per_node)) continue;
                if (best < 0 || free_[static_cast<std::size_t>(n)] < free_[static_cast<std::size_t>(best)]) best = n;
            }
            if (best >= 0) chosen.push_back(best);
        }
        if (!chosen.empty()) {
            JobSpec s = std::move(spec);
            pending_.erase(id);
            // Only backfill applies --time-min; the main scheduler starts a job at its --time.
            if (!backfill) s.time_min = 0;
            start(id, std::move(s), std::move(chosen), now, out);
            continue;
        }
        if (!backfill) break;
        // Reserve: the earliest start on nodes no higher-priority job has fenced yet.
        std::vector<std::pair<double, int>> when;
        for (int n = 0; n < n_nodes; ++n) {
            if (fence[static_cast<std::size_t>(n)] < kInf) continue;
            if (spec.pinned_node && *spec.pinned_node != n) continue;
            when.emplace_back(free_at(n, spec.nodes > 1 ? gpn_ : spec.gpus_per_node, now), n);
        }
        std::sort(when.begin(), when.end());
        if (static_cast<int>(when.size()) < spec.nodes) continue;
        const double t = when[static_cast<std::size_t>(spec.nodes - 1)].first;
        if (t == kInf) continue;
        for (int i = 0; i < spec.nodes; ++i) {
            const auto n = static_cast<std::size_t>(when[static_cast<std::size_t>(i)].second);
            fence[n] = std::min(fence[n], t);
            if (!spec.eval) bg_fence_[n] = std::min(bg_fence_[n], t);
        }
    }
    return out;
}

void SlurmModel::finish(int job, double now, bool timed_out) {
    auto it = running_.find(job);
    if (it == running_.end()) return;
    Running r = std::move(it->second);
    running_.erase(it);
    for (int n : r.nodes) free_[static_cast<std::size_t>(n)] += r.spec.gpus_per_node;
    if (!r.spec.eval) background_gpus_ -= r.spec.gpus_per_node * static_cast<int>(r.nodes.size());
    if (r.spec.on_end) r.spec.on_end(now, timed_out);
}

std::vector<NodeWindow> SlurmModel::windows(double now) const {
    std::vector<NodeWindow> out;
    for (int n = 0; n < nodes(); ++n) {
        NodeWindow w;
        w.node = node_name(n);
        w.total_gpus = gpn_;
        w.free_gpus = free_[static_cast<std::size_t>(n)];
        w.window_s = bg_fence_[static_cast<std::size_t>(n)] - now;
        out.push_back(std::move(w));
    }
    return out;
}

}  // namespace acme::evalsched::sim
