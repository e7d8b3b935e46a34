// evalsched in the simulator: the same make_trials, PriorBook, plan_round() and decide_metric()
// the daemon uses. The glue here plays evalschedd's part: poll the windows, submit what the plan
// says (pinned to the planned node, with the planned --time), stage the checkpoint once per
// node, learn from every finished trial, and start each dataset's CPU metric job when its last
// trial ends.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "evalsched/core/decisions.hpp"
#include "evalsched/core/duration.hpp"
#include "evalsched/core/planner.hpp"
#include "evalsched/core/priors.hpp"
#include "evalsched/core/trials.hpp"
#include "evalsched/sim/policy.hpp"

namespace acme::evalsched::sim {
namespace {

// evalschedd re-plans on every trial end and at least every bf_interval (30 s when backfill
// is modelled as an oracle).
double poll_interval(const Scenario& sc) { return sc.bf_interval_s > 0 ? sc.bf_interval_s : 30; }

class Evalsched : public Policy {
public:
    explicit Evalsched(bool pilots) : pilots_(pilots) {}

    std::string name() const override { return pilots_ ? "evalsched" : "evalsched-trials"; }

    std::string parameters(const Scenario& sc) const override {
        const PlanOptions o;
        const PilotOptions po;
        const TailOptions to;
        if (pilots_)
            return fmt::format("per-dataset trials (shards, no bundles: a pilot loads once), priors from {} earlier runs per dataset; pilot jobs "
                               "(one per free GPU of a window, --time-min = the window less a backfill cycle, >= startup [+ staging] + shortest trial, --time = window, <= {} or the longest trial, + the launch cost) "
                               "load the checkpoint once and pull trials longest-first while p90 x {:.2f} + {:.0f}s fits their granted "
                               "time; a trial longer than {:.2f} x the work left per serving GPU is re-sharded (x2, x4 .. x{}, pieces >= {:.0f}s) "
                               "before it starts; checkpoint staged once per node, metrics as CPU jobs",
                               sc.history_runs, human_duration(po.max_s), 1 + o.margin_fraction, o.margin_s, to.share_fraction, to.max_factor,
                               to.min_piece_s);
        return fmt::format("per-dataset trials (shards, bundles), priors from {} earlier runs per dataset, LPT into backfill windows, "
                           "--time = startup + p90 x {:.2f} + {:.0f}s, checkpoint staged once per node, metrics as CPU jobs",
                           sc.history_runs, 1 + o.margin_fraction, o.margin_s);
    }

    void on_checkpoint(World& w, const CheckpointArrival& ckpt) override {
        if (!seeded_) seed_history(w);
        w.open_scorecard(ckpt);
        const Scenario& sc = w.scenario();
        Checkpoint c{ckpt.name, "/dev/shm/evalsched/" + ckpt.name, "/out/" + ckpt.name, sc.model};
        const TrialSet set = make_trials(w.suite(), c, book_, trial_options(w.suite(), sc));
        auto& run = runs_[ckpt.name];
        run.rank = ckpt.at;
        run.checkpoint = c;
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
        double started_at = 0;
    };
    struct Metric {
        std::set<std::string> after;
        bool has_command = true;
    };
    struct CkptRun {
        Checkpoint checkpoint;
        double rank = 0;
        std::set<std::string> trials_left;
        std::map<std::string, Metric> metrics;
    };

    void seed_history(World& w) {
        seeded_ = true;
        sim::seed_history(book_, w);
    }

    // A job end reaches evalschedd and its next round after the replanning latency.
    void poll_later(World& w) {
        w.at(w.now() + w.scenario().replan_latency_s, [this, &w] { poll(w); });
    }

    void tick(World& w) {
        w.at(w.now() + poll_interval(w.scenario()), [this, &w] {
            poll(w);
            if (!pending_.empty()) tick(w);
            else timer_ = false;
        });
    }

    void poll(World& w) {
        const Scenario& sc = w.scenario();
        std::vector<PendingTrial> trials;
        for (const auto& [id, p] : pending_)
            if (!p.submitted) trials.push_back(pending_view(id, p, sc));
        if (trials.empty()) return;
        auto windows = w.slurm().windows(w.now());
        for (std::size_t n = 0; n < windows.size(); ++n) {
            // GPUs our own submitted jobs are about to take are not free.
            windows[n].free_gpus -= claimed_[static_cast<int>(n)];
            for (const auto& [ckpt, ready] : cache_[static_cast<int>(n)]) windows[n].staged.push_back(ckpt);
        }
        if (pilots_) {
            const PilotPlan p = plan_pilots(trials, windows, serving_);
            for (const auto& x : p.submit) submit_pilot(w, x);
            return;
        }
        // The daemon's round: the simulator injects no node failures, so no trial avoids a node.
        const Plan p = plan_round(trials, {}, std::move(windows));
        for (const auto& x : p.submit) submit(w, x);
    }

    TrialOptions trial_options(const Suite& suite, const Scenario& sc) const {
        TrialOptions o = options_for(suite, book_, sc.model, sc.nodes * sc.gpus_per_node);
        // A pilot pays the load once, so short datasets need no bundle to amortize it; alone
        // they are the small items that let longest-first fill the end evenly.
        if (pilots_) o.bundle_below_s = 0;
        return o;
    }

    PendingTrial pending_view(const std::string& id, const Pending& p, const Scenario& sc) const {
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
        return t;
    }

    // A pilot: one job that loads the checkpoint once and pulls trials until none fits.
    struct PilotRun {
        int job = 0;
        int node = 0;
        int gpus = 1;
        std::string checkpoint;
        std::string key;
        double ends_at = 0;       // its granted limit
        bool started = false;
        bool alive = true;
        std::string current;      // the trial in flight
        std::shared_ptr<std::vector<double>> parts = std::make_shared<std::vector<double>>();
    };

    void submit_pilot(World& w, const PilotRequest& x) {
        const int node = std::stoi(x.node.substr(1)) - 1;
        claimed_[node] += x.gpus;
        ++serving_[pilot_key(x.checkpoint, x.gpus)];
        const int serial = next_pilot_++;
        PilotRun& pr = pilots_run_[serial];
        pr.node = node;
        pr.gpus = x.gpus;
        pr.checkpoint = x.checkpoint;
        pr.key = pilot_key(x.checkpoint, x.gpus);
        JobSpec job;
        job.eval = true;
        job.gpus_per_node = x.gpus;
        job.pinned_node = node;
        // The daemon's ask (pilot_ask): both bounds carry the launch cost (without it a trial
        // sized to the planner's --time missed by seconds and waited for a later pilot, issue
        // 18: bbh ran last), --time-min the window less a backfill cycle.
        const PilotAsk ask = pilot_ask(x, w.scenario().launch_cost_s, poll_interval(w.scenario()));
        job.time_min = ask.time_min_s;
        job.time_limit = ask.time_limit_s;
        job.priority_time = w.now() + w.scenario().eval_nice_s;
        job.on_granted = [this, &w, serial](double now, int n, int id, double granted) {
            PilotRun& p = pilots_run_.at(serial);
            p.job = id;
            p.started = true;
            p.ends_at = now + granted;
            claimed_[p.node] -= p.gpus;
            const Scenario& sc = w.scenario();
            auto& cache = cache_[n];
            auto it = cache.find(p.checkpoint);
            if (it == cache.end()) {
                const double d = w.storage().read(now, n, sc.model.checkpoint_bytes);
                book_.add_stage(SlurmModel::node_name(n), sc.model.checkpoint_bytes, d);
                it = cache.emplace(p.checkpoint, now + d).first;
            }
            const double wait = std::max(0.0, it->second - now);
            const double startup = w.truth().startup_s(sc.model.checkpoint_bytes);
            w.stats().load_gpu_s += p.gpus * (wait + startup);
            // The pilot's one load is a trial startup as the daemon learns it; the trials it
            // then pulls start with the model loaded and teach nothing about startup.
            const double loaded = now + wait + startup;
            w.at(loaded, [this, &w, serial, startup] {
                if (const PilotRun& q = pilots_run_.at(serial); q.alive) book_.add_startup(size_class(w.scenario().model.params_b), q.gpus, startup);
                pilot_pull(w, serial);
            });
            return granted;
        };
        job.on_end = [this, &w, serial](double, bool) {
            PilotRun& p = pilots_run_.at(serial);
            if (!p.alive) return;
            p.alive = false;
            --serving_[p.key];
            if (!p.current.empty()) {
                // Killed at its limit with a trial in flight: that trial's output is lost; it
                // goes back to the queue with a longer limit.
                ++w.stats().timeouts;
                Pending& t = pending_.at(p.current);
                t.submitted = false;
                t.p90_boost += t.trial.prior.p90_s + 600;
                p.current.clear();
            }
            poll_later(w);
        };
        w.submit_gpu_job(std::move(job));
    }

    void pilot_pull(World& w, int serial) {
        PilotRun& p = pilots_run_.at(serial);
        if (!p.alive) return;
        const Scenario& sc = w.scenario();
        std::vector<PendingTrial> trials;
        for (const auto& [id, t] : pending_)
            if (!t.submitted && t.checkpoint == p.checkpoint && t.trial.gpus == p.gpus) trials.push_back(pending_view(id, t, sc));
        const auto next = pilot_next(trials, p.checkpoint, p.gpus, p.ends_at - w.now());
        if (!next) {
            w.end_gpu_job(p.job);  // nothing fits: give the GPUs back now
            return;
        }
        if (split_for_tail(w, p, trials[*next])) {
            pilot_pull(w, serial);  // choose again among the pieces
            return;
        }
        const std::string id = trials[*next].id;
        Pending& t = pending_.at(id);

        t.submitted = true;
        p.current = id;
        p.parts->clear();
        double total = 0;
        for (const auto& part : t.trial.parts) {
            const double s = w.truth().preprocess_s(part.dataset, part.fraction()) + w.truth().sample_run_s(part.dataset, part.fraction(), t.trial.gpus, w.rng());
            p.parts->push_back(s);
            total += s;
        }
        w.at(w.now() + total, [this, &w, serial, id] {
            PilotRun& q = pilots_run_.at(serial);
            if (!q.alive || q.current != id) return;  // killed at its limit before this
            q.current.clear();
            finished(w, id, *q.parts, false);
            // The pilot asks evalschedd for its next trial: one round trip.
            w.at(w.now() + w.scenario().replan_latency_s, [this, &w, serial] { pilot_pull(w, serial); });
        });
    }

    // Tail-aware splitting (tail_split_factor): the pilot's next trial, if it is long against
    // the work its checkpoint's pilots have left, is re-sharded into pieces that go back to the
    // queue. Returns whether it split.
    bool split_for_tail(World& w, const PilotRun& pilot, const PendingTrial& next) {
        double left = 0;
        int gpus = 0;
        for (const auto& [id, t] : pending_)
            if (t.checkpoint == pilot.checkpoint && t.trial.gpus == pilot.gpus)
                left += t.trial.gpus * (t.submitted ? std::max(0.0, t.started_at + t.trial.prior.median_s - w.now()) : t.trial.prior.median_s);
        for (const auto& [serial, q] : pilots_run_)
            if (q.alive && q.started && q.key == pilot.key) gpus += q.gpus;
        const int factor = tail_split_factor(next, left, gpus);
        if (factor < 2) return false;
        auto pit = pending_.find(next.id);
        CkptRun& run = runs_.at(pilot.checkpoint);
        const std::vector<Trial> pieces = split_trial(pit->second.trial, w.suite(), run.checkpoint, factor);
        if (pieces.size() < 2) return false;
        const Pending old = pit->second;
        pending_.erase(pit);
        run.trials_left.erase(next.id);
        for (const Trial& t : pieces) {
            Pending p = old;
            p.trial = t;
            p.p90_boost = old.p90_boost / factor;
            pending_[t.id] = std::move(p);
            run.trials_left.insert(t.id);
        }
        for (auto& [dataset, m] : run.metrics)
            if (m.after.erase(next.id))
                for (const Trial& t : pieces) m.after.insert(t.id);
        ++w.stats().splits;
        return true;
    }

    // Bookkeeping of a trial that ran to completion: priors, conservation, metric jobs.
    // `loaded_itself`: a trial job that paid its own startup (a pilot's trials do not).
    void finished(World& w, const std::string& id, const std::vector<double>& parts, bool loaded_itself) {
        auto pit = pending_.find(id);
        Pending& p = pit->second;
        const std::string cls = size_class(w.scenario().model.params_b);
        for (std::size_t i = 0; i < p.trial.parts.size(); ++i) {
            const auto& part = p.trial.parts[i];
            book_.add_run({part.dataset, cls, p.trial.gpus}, parts[i], part.fraction());
            ++w.stats().pieces_done[piece_key(p.checkpoint, part.dataset, part.shard, part.num_shards)];
        }
        if (loaded_itself) book_.add_startup(cls, p.trial.gpus, w.truth().startup_s(w.scenario().model.checkpoint_bytes));
        const std::string ckpt = p.checkpoint;
        CkptRun& run = runs_.at(ckpt);
        run.trials_left.erase(id);
        for (auto& [dataset, m] : run.metrics) {
            if (!m.after.erase(id)) continue;
            // The daemon's rule: a metric job goes once its trials are done or queued. Jobs here
            // cannot be chained, so the unfinished trials count as not yet placed.
            std::vector<TrialProgress> progress;
            for (const auto& left : m.after) progress.push_back({left, "pending", "", std::nullopt});
            if (decide_metric(progress).kind != MetricDecision::Kind::submit) continue;
            if (!m.has_command) {
                w.score(ckpt, dataset);
                continue;
            }
            w.submit_cpu_job(w.truth().metric_s(dataset), [&w, ckpt, dataset = dataset] { w.score(ckpt, dataset); });
        }
        if (run.trials_left.empty())
            for (auto& [n, cache] : cache_) cache.erase(ckpt);
        pending_.erase(pit);
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
        // Slurm's minute resolution; the limit runs from the allocation, so it carries the launch cost.
        job.time_limit = std::ceil((x.time_limit_s + w.scenario().launch_cost_s) / 60) * 60;
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
            const double startup = w.truth().startup_s(sc.model.checkpoint_bytes);
            w.stats().load_gpu_s += p.trial.gpus * (wait + startup);
            double total = wait + startup;
            parts->clear();
            for (const auto& part : p.trial.parts) {
                const double s = w.truth().preprocess_s(part.dataset, part.fraction()) + w.truth().sample_run_s(part.dataset, part.fraction(), p.trial.gpus, w.rng());
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
                poll_later(w);
                return;
            }
            finished(w, id, *parts, true);
            poll_later(w);
        };
        w.submit_gpu_job(std::move(job));
    }

    bool pilots_ = true;
    std::map<std::string, int> serving_;   // pilot_key -> pilots submitted or running
    std::map<int, PilotRun> pilots_run_;
    int next_pilot_ = 0;
    PriorBook book_;
    bool seeded_ = false;
    bool timer_ = false;
    std::map<std::string, Pending> pending_;
    std::map<std::string, CkptRun> runs_;
    std::map<int, int> claimed_;
    std::map<int, std::map<std::string, double>> cache_;  // node -> checkpoint -> ready at
};

}  // namespace

void seed_history(PriorBook& book, World& w) {
    const Scenario& sc = w.scenario();
    const std::string cls = size_class(sc.model.params_b);
    std::normal_distribution<double> drift(0, sc.history_drift);
    for (int i = 0; i < sc.history_runs; ++i)
        for (const auto& d : w.suite().datasets) {
            book.add_run({d.name, cls, d.gpus}, std::exp(drift(w.rng())) * w.truth().sample_run_s(d.name, 1.0, d.gpus, w.rng()) + w.truth().preprocess_s(d.name));
            // Each earlier trial also taught its startup, as evalschedd learns it (run.json's
            // wall time minus the inference): the world's load time.
            book.add_startup(cls, d.gpus, w.truth().startup_s(sc.model.checkpoint_bytes));
        }
}

std::unique_ptr<Policy> make_evalsched() { return std::make_unique<Evalsched>(true); }
std::unique_ptr<Policy> make_evalsched_trials() { return std::make_unique<Evalsched>(false); }

}  // namespace acme::evalsched::sim
