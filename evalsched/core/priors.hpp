// Run-time priors: how long a dataset takes for a model size class on a number of GPUs, how
// long a trial takes to start (harness init and model load) and how long staging a checkpoint
// onto a node takes. Learned from finished trials (median and
// p90 of the most recent runs, so one slow run on a sick node does not poison the estimate),
// falling back to the suite author's prior, then to sample count x per-sample cost by kind,
// and finally to a conservative guess that is marked as such. Pure: the SQLite side lives in
// evalsched/store/priors, whose rows (recent_priors) a PriorBook takes with add_window.
#pragma once

#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "evalsched/core/cost_model.hpp"
#include "evalsched/core/suite.hpp"
#include "evalsched/store/priors.hpp"

namespace acme::evalsched {

enum class PriorSource { history, suite, samples, unknown };
std::string_view to_string(PriorSource source);

struct Estimate {
    double median_s = 0;
    double p90_s = 0;
    PriorSource source = PriorSource::unknown;
    int runs = 0;  // observations behind a history estimate
    // No measurement and no sample count: the planner gives it a generous --time and the
    // report marks it, so a user sees why the trial waited for a long window.
    bool conservative() const { return source == PriorSource::unknown; }
};

struct RunKey {
    std::string dataset;
    std::string size_class;
    int gpus = 1;
    auto operator<=>(const RunKey&) const = default;
};

class PriorBook {
public:
    explicit PriorBook(CostModel model = {}, std::size_t window = 20) : model_(model), window_(window) {}

    // One finished (shard of a) trial: `seconds` of inference covering `fraction` of the
    // dataset (1/num_shards for a shard). Stored as the whole-dataset equivalent; only the
    // newest `window` runs per key are kept.
    void add_run(const RunKey& key, double seconds, double fraction = 1.0);
    // One checkpoint staged onto `node`: bytes copied from shared storage in `seconds`.
    void add_stage(const std::string& node, double bytes, double seconds);
    // One trial's startup: the seconds its command ran beyond its parts' inference (harness
    // init and the model load from the staged copy; the staging copy is not in it). Kept per
    // size class and GPU count, newest `window`.
    void add_startup(const std::string& size_class, int gpus, double seconds);
    // Every row of the store's window (store::recent_priors), oldest first within a key.
    void add_window(const store::PriorWindow& window);

    // Inference time of the whole dataset for this model on `gpus` GPUs. History for the exact
    // GPU count wins; history at another GPU count is rescaled before the cost model is used.
    Estimate run_estimate(const Dataset& dataset, const ModelSpec& model, int gpus) const;
    // Seconds to stage `bytes` onto `node`: the node's median measured bandwidth, else the
    // default (a 25 Gb/s NIC, the per-node bottleneck the paper measured in Fig. 16).
    double stage_seconds(std::string_view node, double bytes) const;
    // A trial's startup for this model on `gpus` GPUs: the median learned at this size class and
    // GPU count, else at this size class and any GPU count (loading is per GPU, in parallel),
    // else the cost model's trial_startup_seconds(checkpoint_bytes). The planner bundles
    // datasets shorter than a few startups, so a guess 5x too long (issue 18: 25 s of assumed
    // framework init against a measured 4.7 s load) bundles what should run in parallel.
    double startup_seconds(const ModelSpec& model, int gpus) const;
    std::size_t startups(const std::string& size_class, int gpus) const;

    const CostModel& cost_model() const { return model_; }
    std::size_t runs(const RunKey& key) const;

    double default_stage_bytes_per_s = 25e9 / 8;

private:
    CostModel model_;
    std::size_t window_;
    std::map<RunKey, std::deque<double>> runs_;
    std::map<std::string, std::deque<double>, std::less<>> stage_bw_;
    std::map<std::pair<std::string, int>, std::deque<double>> startups_;
};

// Median and p90 (nearest-rank) of a non-empty sample.
std::pair<double, double> median_p90(std::deque<double> values);

}  // namespace acme::evalsched
