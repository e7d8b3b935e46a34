#include "evalsched/daemon/evaluations.hpp"

#include "evalsched/core/user_environment.hpp"

namespace acme::evalsched {

NewTrial new_trial(const Trial& t) {
    NewTrial n;
    n.key = t.id;
    for (const auto& p : t.parts) n.datasets += (n.datasets.empty() ? "" : ",") + p.dataset;
    n.shard = t.parts.front().shard;
    n.num_shards = t.parts.front().num_shards;
    n.gpus = t.gpus;
    n.median_s = t.prior.median_s;
    n.p90_s = t.prior.p90_s;
    n.startup_s = t.startup_s;
    n.metric_s = t.metric_s;
    n.conservative = t.prior.conservative();
    n.command = t.command;
    return n;
}

namespace {

NewEvaluation new_evaluation(const SubmitRequest& req) {
    NewEvaluation e;
    e.name = req.name;
    e.checkpoint = req.checkpoint;
    e.path = req.checkpoint_path;
    e.suite_name = req.suite.name;
    e.suite_file = req.suite_file;
    e.priority = req.priority;
    e.params_b = req.params_b;
    e.checkpoint_bytes = req.checkpoint_bytes;
    e.environment = req.environment;
    for (const auto& g : req.suite.stage.empty() ? kDefaultStage : req.suite.stage) e.stage += (e.stage.empty() ? "" : "\n") + g;
    e.suite_text = req.suite_text;
    e.served = req.served;
    // What progress counts samples by (progress.hpp), for the datasets whose size the suite gives.
    for (const auto& d : req.suite.datasets)
        if (d.samples && *d.samples > 0) e.samples.emplace_back(d.name, static_cast<std::int64_t>(*d.samples));
    return e;
}

NewTrials new_trials(const TrialSet& set) {
    NewTrials out;
    for (const auto& t : set.trials) out.trials.push_back(new_trial(t));
    // The datasets' metric jobs, then the suite groups' (one job each); a dataset scored inside
    // its trials has no command and no job.
    for (const auto* jobs : {&set.metrics, &set.group_metrics})
        for (const MetricJob& m : *jobs)
            if (!m.command.empty()) out.metrics.push_back({m.dataset, m.command, m.estimate_s, m.after});
    return out;
}

}  // namespace

std::int64_t create_evaluation(store::Database& db, const SubmitRequest& req, const Caller& caller, const std::string& results_dir,
                               const std::function<TrialSet(const std::string&)>& make, double now) {
    return insert_evaluation(db, new_evaluation(req), caller, results_dir,
                             [&](const std::string& output_dir) { return new_trials(make(output_dir)); }, now);
}

std::vector<std::string> load_environment(store::Database& db, std::int64_t evaluation) {
    return without_loader_variables(stored_environment(db, evaluation));
}

}  // namespace acme::evalsched
