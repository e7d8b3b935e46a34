// The policies the simulator compares on one seed. Each one acts only through World, as the
// real tool would act only through Slurm and shared storage.
#pragma once

#include <memory>
#include <string>

#include "evalsched/core/priors.hpp"
#include "evalsched/sim/world.hpp"

namespace acme::evalsched::sim {

class Policy {
public:
    virtual ~Policy() = default;
    virtual std::string name() const = 0;
    // The defaults it runs with, printed beside its results so a reader can check them.
    virtual std::string parameters(const Scenario& scenario) const = 0;
    // A checkpoint appears; the policy opens its scorecard and starts evaluating it.
    virtual void on_checkpoint(World& world, const CheckpointArrival& ckpt) = 0;
};

// lm-evaluation-harness style: one job, one node, data parallel over its GPUs, every task in
// one process with one model load, metrics in-process.
std::unique_ptr<Policy> make_sequential();
// OpenCompass at its defaults on Slurm: NumWorkerPartitioner + SlurmRunner, 32 workers, no
// --time; with_time: one --time for every task through SlurmRunner's extra_command.
std::unique_ptr<Policy> make_opencompass(bool with_time);
// evalsched: evalsched/core's trials, priors and pilot planner (plan_pilots / pilot_next).
std::unique_ptr<Policy> make_evalsched();
// evalsched with one Slurm job per trial (plan()): what the pilots are measured against.
std::unique_ptr<Policy> make_evalsched_trials();

std::unique_ptr<Policy> make_policy(const std::string& name);

// evalsched's priors before the first checkpoint: scenario.history_runs earlier evaluations of
// this pretraining run (earlier checkpoints: each strays from today's truth by a drift per
// dataset, besides run noise). With none, the suite's priors and the cost model alone.
void seed_history(PriorBook& book, World& world);

// The key under which a policy records one finished piece of a dataset, for the conservation
// check: every dataset of every checkpoint covered exactly once.
std::string piece_key(const std::string& checkpoint, const std::string& dataset, int index, int count);

}  // namespace acme::evalsched::sim
