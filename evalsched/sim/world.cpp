#include "evalsched/sim/world.hpp"

#include <algorithm>
#include <cmath>

namespace acme::evalsched::sim {
namespace {

// FNV-1a: a per-dataset seed that is the same on every platform and build.
std::uint64_t fnv1a(std::string_view s) {
    std::uint64_t h = 1469598103934665603ULL;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
    return h;
}

double lognormal(std::mt19937_64& rng, double sd) {
    std::normal_distribution<double> n(0, sd);
    return std::exp(n(rng));
}

}  // namespace

Truth::Truth(const Suite& suite, const Scenario& sc, const CostModel& cost)
    : cost_(cost), noise_(sc.durations.empty() ? sc.run_noise : 0), measured_(!sc.durations.empty()), load_bps_(sc.load_bytes_per_s) {
    for (const auto& d : suite.datasets) {
        if (measured_) {
            // The experiment checked that the file names every dataset.
            const double samples = d.samples ? static_cast<double>(*d.samples) : 1000;
            std::mt19937_64 rng(fnv1a(d.name) ^ (sc.seed * 0x9e3779b97f4a7c15ULL));
            const double metric = d.metric_command ? cost.metric_seconds(d.kind, samples) * lognormal(rng, 0.3) * sc.time_scale : 0;
            rows_[d.name] = Row{sc.durations.at(d.name), 0, metric, d.kind};
            continue;
        }
        std::mt19937_64 rng(fnv1a(d.name) ^ (sc.seed * 0x9e3779b97f4a7c15ULL));
        const double samples = d.samples ? static_cast<double>(*d.samples) : 1000;
        const double guess = d.prior_s ? *d.prior_s * sc.model.params_b / 7.0
                                       : cost.run_seconds(d.kind, samples, sc.model.params_b, 1);
        const double run = guess * lognormal(rng, sc.truth_spread);
        const double metric = d.metric_command ? cost.metric_seconds(d.kind, samples) * lognormal(rng, 0.3) * sc.time_scale : 0;
        rows_[d.name] = Row{run, cost.preprocess_seconds(samples), metric, d.kind};
    }
}

double Truth::mean_run_s(const std::string& d) const { return rows_.at(d).run; }
double Truth::preprocess_s(const std::string& d, double fraction) const {
    if (measured_) return 0;
    const double full = rows_.at(d).preprocess;
    return cost_.preprocess_fixed_s + (full - cost_.preprocess_fixed_s) * fraction;
}
double Truth::metric_s(const std::string& d) const { return rows_.at(d).metric; }

double Truth::sample_run_s(const std::string& d, double fraction, int gpus, std::mt19937_64& rng) const {
    const double g = gpus > 1 ? gpus * cost_.multi_gpu_efficiency : 1.0;
    return rows_.at(d).run * fraction / g * lognormal(rng, noise_);
}

double Truth::startup_s(double bytes) const { return load_bps_ > 0 ? bytes / load_bps_ : cost_.trial_startup_seconds(bytes); }

World::World(const Suite& suite, const Scenario& sc, bool with_background)
    : suite_(suite), scenario_(sc), truth_(suite, sc, CostModel{}), slurm_(sc.nodes, sc.gpus_per_node),
      storage_(sc.nic_bytes_per_s, sc.storage_bytes_per_s), rng_(sc.seed), now_(-sc.warmup_s) {
    timeline_.emplace_back(now_, sc.nodes * sc.gpus_per_node);
    slurm_.set_launch_cost(sc.launch_cost_s);
    if (sc.bf_interval_s > 0) {
        // Backfill's phase against the evaluation's arrival is whatever the clock says.
        std::mt19937_64 phase_rng(sc.seed ^ 0x6266696e74ULL);
        at(now_ + std::uniform_real_distribution<double>(0, sc.bf_interval_s)(phase_rng), [this] { backfill_tick(); });
    }
    if (with_background) {
        BackgroundOptions bo;
        bo.nodes = sc.nodes;
        bo.gpus_per_node = sc.gpus_per_node;
        bo.load = sc.background_load;
        // Long enough for the slowest policy on the smallest cluster to finish.
        const double horizon = sc.checkpoints * sc.checkpoint_interval_s + 7 * 86400;
        for (const auto& j : background_jobs(bo, -sc.warmup_s, horizon, sc.seed)) {
            at(j.arrival, [this, j] {
                JobSpec s;
                s.nodes = j.nodes;
                s.gpus_per_node = j.gpus_per_node;
                s.time_limit = j.time_limit;
                s.priority_time = j.arrival;
                s.on_start = [d = j.duration](double, int) { return d; };
                slurm_.submit(std::move(s));
            });
        }
    }
}

void World::at(double t, std::function<void()> fn) { events_.push(Event{std::max(t, now_), seq_++, std::move(fn)}); }

int World::submit_gpu_job(JobSpec spec) {
    ++stats_.gpu_jobs;
    dirty_ = true;
    return slurm_.submit(std::move(spec));
}

void World::end_gpu_job(int job) {
    slurm_.finish(job, now_, false);
    dirty_ = true;
}

void World::submit_cpu_job(double seconds, std::function<void()> done) {
    at(now_ + scenario_.cpu_submit_latency_s, [this, seconds, done = std::move(done)]() mutable {
        cpu_queue_.emplace_back(seconds, std::move(done));
        start_cpu_jobs();
    });
}

void World::start_cpu_jobs() {
    while (!cpu_queue_.empty() && cpu_running_ < scenario_.cpu_slots) {
        auto [seconds, done] = std::move(cpu_queue_.front());
        cpu_queue_.erase(cpu_queue_.begin());
        ++cpu_running_;
        at(now_ + seconds, [this, done = std::move(done)] {
            --cpu_running_;
            done();
            start_cpu_jobs();
        });
    }
}

void World::open_scorecard(const CheckpointArrival& ckpt) {
    Card c{ckpt.at, {}, static_cast<int>(suite_.datasets.size())};
    for (const auto& d : suite_.datasets) c.scored[d.name] = false;
    cards_[ckpt.name] = std::move(c);
}

void World::score(const std::string& checkpoint, const std::string& dataset) {
    Card& c = cards_.at(checkpoint);
    bool& s = c.scored.at(dataset);
    if (s) return;
    s = true;
    if (--c.left == 0) c.completed = now_;
}

bool World::all_scored() const {
    if (static_cast<int>(cards_.size()) < expected_cards_) return false;
    return std::all_of(cards_.begin(), cards_.end(), [](const auto& kv) { return kv.second.left == 0; });
}

std::vector<double> World::scorecard_latencies() const {
    std::vector<double> out;
    for (const auto& [name, c] : cards_) out.push_back(c.completed - c.arrival);
    return out;
}

double World::last_completion() const {
    double t = 0;
    for (const auto& [name, c] : cards_) t = std::max(t, c.completed);
    return t;
}

void World::backfill_tick() {
    backfill_due_ = true;
    at(now_ + scenario_.bf_interval_s, [this] { backfill_tick(); });
}

void World::schedule_pass(bool backfill) {
    for (const Started& s : slurm_.schedule(now_, backfill)) {
        at(s.end, [this, s] {
            slurm_.finish(s.job, now_, s.timed_out);
            dirty_ = true;
        });
    }
    const int capacity = slurm_.nodes() * slurm_.gpus_per_node() - slurm_.background_gpus();
    if (timeline_.empty() || timeline_.back().second != capacity) timeline_.emplace_back(now_, capacity);
}

void World::run(double until) {
    while (!events_.empty()) {
        if (expected_cards_ > 0 && all_scored()) return;
        const double t = events_.top().t;
        if (t > until) return;
        now_ = t;
        // Everything that happens at one instant, then one scheduling pass, as slurmctld
        // batches the RPCs it receives between passes.
        while (!events_.empty() && events_.top().t == t) {
            Event e = events_.top();
            events_.pop();
            e.fn();
            dirty_ = true;
        }
        // With no bf_interval every pass is a backfill pass (the oracle the issue removed).
        const bool backfill = backfill_due_ || scenario_.bf_interval_s <= 0;
        if (backfill_due_ || dirty_) {
            backfill_due_ = dirty_ = false;
            schedule_pass(backfill);
        }
    }
}

}  // namespace acme::evalsched::sim
