// evalsched in the simulator: the same make_trials, PriorBook and plan() the daemon uses. The
// glue here plays evalschedd's part: poll the windows, submit what the plan says (pinned to
// the planned node, with the planned --time), stage the checkpoint once per node, learn from
// every finished trial, and start each dataset's CPU metric job when its last trial ends.
#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "evalsched/core/planner.hpp"
#include "evalsched/core/priors.hpp"
#include "evalsched/core/trials.hpp"
#include "evalsched/sim/policy.hpp"

namespace acme::evalsched::sim {
namespace {

// evalschedd re-plans on every trial end and at least this often (Slurm's bf_interval).
constexpr double kPollInterval = 30;

class Evalsched : public Policy {
public:
    std::string name() const override { return "evalsched"; }

    std::string parameters(const Scenario& sc) const override {
        const PlanOptions o;
        return fmt::format("per-dataset trials (shards, bundles), priors from {} earlier runs per dataset, LPT into backfill windows, "
                           "--time = startup + p90 x {:.2f} + {:.0f}s, checkpoint staged once per node, metrics as CPU jobs",
                           sc.history_runs, 1 + o.margin_fraction, o.margin_s);
    }

    void on_checkpoint(World& w, const CheckpointArrival& ckpt) override {
        if (!seeded_) seed_history(w);
        w.open_scorecard(ckpt);
        const Scenario& sc = w.scenario();
        Checkpoint c{ckpt.name, "/dev/shm/evalsched/" + ckpt.name, "/out/" + ckpt.name, sc.model};
        const TrialSet set = make_trials(w.suite(), c, book_, options_for(w.suite(), book_, sc.model, sc.nodes * sc.gpus_per_node));
        auto& run = runs_[ckpt.name];
        run.rank = ckpt.at;
        for (const auto& t : set.trials) {
            run.trials_left.insert(t.id);
            pending_[t.id] = Pending{t, ckpt.name, ckpt.at, 0, false};
        }
        for (const auto& m : set.metrics) {
            auto& mj = run.metrics[m.dataset];
            mj.after.insert(m.after.begin(), m.after.end());
            mj.has_command = !m.command.empty();
        }
        poll(w);
        if (!timer_) {
            timer_ = true;
            tick(w);
        }
    }

private:
    struct Pending {
        Trial trial;
        std::string checkpoint;
        double rank = 0;
        double p90_boost = 0;  // after a TIMEOUT, the next --time is longer
        bool submitted = false;
    };
    struct Metric {
        std::set<std::string> after;
        bool has_command = true;
    };
    struct CkptRun {
        double rank = 0;
        std::set<std::string> trials_left;
        std::map<std::string, Metric> metrics;
    };

    // Earlier checkpoints of this pretraining run have been scored before: their trials are
    // what the priors learned from.
    void seed_history(World& w) {
        seeded_ = true;
        const std::string cls = size_class(w.scenario().model.params_b);
        for (const auto& d : w.suite().datasets)
            for (int i = 0; i < w.scenario().history_runs; ++i)
                book_.add_run({d.name, cls, d.gpus}, w.truth().sample_run_s(d.name, 1.0, d.gpus, w.rng()) + w.truth().preprocess_s(d.name));
    }

    void tick(World& w) {
        w.at(w.now() + kPollInterval, [this, &w] {
            poll(w);
            if (!pending_.empty()) tick(w);
            else timer_ = false;
        });
    }

    void poll(World& w) {
        const Scenario& sc = w.scenario();
        std::vector<PendingTrial> trials;
        for (const auto& [id, p] : pending_) {
            if (p.submitted) continue;
            PendingTrial t;
            t.id = id;
            t.checkpoint = p.checkpoint;
            t.gpus = p.trial.gpus;
            t.median_s = p.trial.prior.median_s;
            t.p90_s = p.trial.prior.p90_s + p.p90_boost;
            t.startup_s = p.trial.startup_s;
            t.metric_s = p.trial.metric_s;
            t.stage_s = book_.stage_seconds("", sc.model.checkpoint_bytes);
            t.checkpoint_rank = p.rank;
            t.conservative = p.trial.prior.conservative();
            trials.push_back(std::move(t));
        }
        if (trials.empty()) return;
        auto windows = w.slurm().windows(w.now());
        for (std::size_t n = 0; n < windows.size(); ++n) {
            // GPUs our own submitted jobs are about to take are not free.
            windows[n].free_gpus -= claimed_[static_cast<int>(n)];
            for (const auto& [ckpt, ready] : cache_[static_cast<int>(n)]) windows[n].staged.push_back(ckpt);
        }
        const Plan p = plan(trials, windows);
        for (const auto& x : p.submit) submit(w, x);
    }

    void submit(World& w, const Placement& x) {
        Pending& p = pending_.at(x.trial);
        p.submitted = true;
        const int node = std::stoi(x.node.substr(1)) - 1;
        claimed_[node] += x.gpus;
        JobSpec job;
        job.eval = true;
        job.gpus_per_node = x.gpus;
        job.pinned_node = node;
        job.time_limit = std::ceil(x.time_limit_s / 60) * 60;  // Slurm's minute resolution
        job.priority_time = w.now() + w.scenario().eval_nice_s;
        auto parts = std::make_shared<std::vector<double>>();
        const std::string id = x.trial;
        job.on_start = [this, &w, id, node, parts](double now, int) {
            Pending& p = pending_.at(id);
            claimed_[node] -= p.trial.gpus;
            const Scenario& sc = w.scenario();
            auto& cache = cache_[node];
            auto it = cache.find(p.checkpoint);
            if (it == cache.end()) {
                const double d = w.storage().read(now, node, sc.model.checkpoint_bytes);
                book_.add_stage(SlurmModel::node_name(node), sc.model.checkpoint_bytes, d);
                it = cache.emplace(p.checkpoint, now + d).first;
            }
            const double wait = std::max(0.0, it->second - now);
            const double startup = w.truth().cost().trial_startup_seconds(sc.model.checkpoint_bytes);
            w.stats().load_gpu_s += p.trial.gpus * (wait + startup);
            double total = wait + startup;
            parts->clear();
            for (const auto& part : p.trial.parts) {
                const double s = w.truth().preprocess_s(part.dataset) + w.truth().sample_run_s(part.dataset, part.fraction(), p.trial.gpus, w.rng());
                parts->push_back(s);
                total += s;
            }
            return total;
        };
        job.on_end = [this, &w, id, parts](double, bool timed_out) {
            auto pit = pending_.find(id);
            Pending& p = pit->second;
            if (timed_out) {
                // Killed at its --time: try again with a longer one. Its partial output is lost.
                ++w.stats().timeouts;
                p.submitted = false;
                p.p90_boost += p.trial.prior.p90_s + 600;
                poll(w);
                return;
            }
            const std::string cls = size_class(w.scenario().model.params_b);
            for (std::size_t i = 0; i < p.trial.parts.size(); ++i) {
                const auto& part = p.trial.parts[i];
                book_.add_run({part.dataset, cls, p.trial.gpus}, (*parts)[i], part.fraction());
                ++w.stats().pieces_done[piece_key(p.checkpoint, part.dataset, part.shard, part.num_shards)];
            }
            const std::string ckpt = p.checkpoint;
            CkptRun& run = runs_.at(ckpt);
            run.trials_left.erase(id);
            for (auto& [dataset, m] : run.metrics) {
                if (!m.after.erase(id) || !m.after.empty()) continue;
                if (!m.has_command) {
                    w.score(ckpt, dataset);
                    continue;
                }
                w.submit_cpu_job(w.truth().metric_s(dataset), [&w, ckpt, dataset = dataset] { w.score(ckpt, dataset); });
            }
            // Scored: the node-local copies of this checkpoint are no longer needed.
            if (run.trials_left.empty())
                for (auto& [n, cache] : cache_) cache.erase(ckpt);
            pending_.erase(pit);
            poll(w);
        };
        w.submit_gpu_job(std::move(job));
    }

    PriorBook book_;
    bool seeded_ = false;
    bool timer_ = false;
    std::map<std::string, Pending> pending_;
    std::map<std::string, CkptRun> runs_;
    std::map<int, int> claimed_;
    std::map<int, std::map<std::string, double>> cache_;  // node -> checkpoint -> ready at
};

}  // namespace

std::unique_ptr<Policy> make_evalsched() { return std::make_unique<Evalsched>(); }

}  // namespace acme::evalsched::sim
