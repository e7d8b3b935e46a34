// lm-evaluation-harness has no cluster scheduling ("We don't support multi-node natively"):
// a team wraps one `accelerate launch -m lm_eval` in an sbatch script on one node. Every rank
// loads the full model from shared storage, requests of all tasks are pooled through the
// model, and metrics run in the same process afterwards while the GPUs idle. The script has no
// --time of its own, so the job carries the partition's DefaultTime. --sequential-gpus 1: one
// GPU, one rank (what tests/bench/evalsched-cluster's sequential baseline runs).
#include <algorithm>
#include <fmt/format.h>

#include "evalsched/sim/policy.hpp"

namespace acme::evalsched::sim {
namespace {

class Sequential : public Policy {
public:
    std::string name() const override { return "sequential"; }

    std::string parameters(const Scenario& sc) const override {
        return fmt::format("1 job x 1 node x {} GPUs (accelerate data parallel), model loaded once per rank from shared storage, "
                           "metrics in-process, --time = DefaultTime {}h",
                           gpus(sc), sc.default_time_s / 3600);
    }

    void on_checkpoint(World& w, const CheckpointArrival& ckpt) override {
        w.open_scorecard(ckpt);
        double inference = 0, metrics = 0;
        const int g = gpus(w.scenario());
        for (const auto& d : w.suite().datasets) {
            inference += w.truth().preprocess_s(d.name) + w.truth().sample_run_s(d.name, 1.0, g, w.rng());
            metrics += w.truth().metric_s(d.name);
        }
        submit(w, ckpt, inference, metrics);
    }

private:
    static int gpus(const Scenario& sc) { return sc.sequential_gpus > 0 ? std::min(sc.sequential_gpus, sc.gpus_per_node) : sc.gpus_per_node; }

    void submit(World& w, const CheckpointArrival& ckpt, double inference_left, double metrics) {
        const Scenario& sc = w.scenario();
        JobSpec job;
        job.eval = true;
        job.gpus_per_node = gpus(sc);
        job.time_limit = sc.default_time_s;
        job.priority_time = w.now() + sc.eval_nice_s;
        auto load = std::make_shared<double>(0);
        job.on_start = [&w, load, inference_left, metrics](double now, int node) {
            const Scenario& s = w.scenario();
            double read = 0;
            const int ranks = gpus(s);
            for (int rank = 0; rank < ranks; ++rank) read = std::max(read, w.storage().read(now, node, s.model.checkpoint_bytes));
            // The same startup every policy's job pays (framework init + weights, or --load-bandwidth).
            *load = read + w.truth().startup_s(s.model.checkpoint_bytes);
            w.stats().load_gpu_s += ranks * *load;
            return *load + inference_left + metrics;
        };
        job.on_end = [this, &w, ckpt, load, inference_left, metrics](double now, bool timed_out) {
            (void)now;
            if (timed_out) {
                // --use_cache keeps finished requests: a resubmission redoes the rest.
                ++w.stats().timeouts;
                const double done = w.scenario().default_time_s - *load;
                submit(w, ckpt, std::max(0.0, inference_left - done), metrics);
                return;
            }
            for (const auto& d : w.suite().datasets) {
                ++w.stats().pieces_done[piece_key(ckpt.name, d.name, 0, 1)];
                w.score(ckpt.name, d.name);
            }
        };
        w.submit_gpu_job(std::move(job));
    }
};

}  // namespace

std::unique_ptr<Policy> make_sequential() { return std::make_unique<Sequential>(); }

}  // namespace acme::evalsched::sim
