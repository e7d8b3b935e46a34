#include "evalsched/core/trials.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "evalsched/core/command_template.hpp"

namespace acme::evalsched {
namespace {

using Values = std::map<std::string, std::string, std::less<>>;

std::string output_dir(const Checkpoint& ckpt, const TrialPart& part) {
    if (part.num_shards == 1) return fmt::format("{}/{}", ckpt.output_root, part.dataset);
    return fmt::format("{}/{}/shard-{}-of-{}", ckpt.output_root, part.dataset, part.shard, part.num_shards);
}

}  // namespace

double TrialSet::total_gpu_seconds() const {
    double total = 0;
    for (const auto& t : trials) total += t.gpus * (t.startup_s + t.prior.median_s);
    return total;
}

TrialOptions options_for(const Suite& suite, const PriorBook& priors, const ModelSpec& model, int cluster_gpus) {
    TrialOptions o;
    // Startup as learned from finished trials (PriorBook::startup_seconds), the cost model's
    // guess until then; the limits below use the suite's mean over its datasets.
    double work = 0, startups = 0;
    for (const auto& d : suite.datasets) {
        const double s = priors.startup_seconds(model, d.gpus);
        startups += s;
        work += d.gpus * (s + priors.run_estimate(d, model, d.gpus).median_s);
    }
    const double startup = suite.datasets.empty() ? priors.startup_seconds(model, 1) : startups / static_cast<double>(suite.datasets.size());
    const double share = work / std::max(cluster_gpus, 1);
    o.shard_above_s = std::max(10 * startup, share / 3);
    o.bundle_below_s = 4 * startup;
    // Bundles are items for LPT too: no longer than a third of a GPU's share. Where that is
    // below bundle_below_s the cluster has GPUs to spare for every short dataset, so a bundle
    // would only serialize them (issue 18: 12 GPUs, 20 datasets of 9-56 s in 6 bundles of 98 s).
    o.bundle_target_s = std::min(share / 3, o.shard_above_s);
    return o;
}

TrialSet trials_for_submission(const Suite& suite, const Checkpoint& checkpoint, const PriorBook& priors, int cluster_gpus) {
    if (cluster_gpus < 0)
        throw std::invalid_argument(fmt::format("cluster GPUs {} is negative: give the usable GPUs, or 0 when not known", cluster_gpus));
    const TrialOptions options = cluster_gpus > 0 ? options_for(suite, priors, checkpoint.model, cluster_gpus) : TrialOptions{};
    return make_trials(suite, checkpoint, priors, options);
}

std::vector<Trial> split_trial(const Trial& trial, const Suite& suite, const Checkpoint& ckpt, int factor) {
    if (factor < 2 || trial.parts.size() != 1) return {trial};
    const TrialPart& part = trial.parts.front();
    auto it = std::find_if(suite.datasets.begin(), suite.datasets.end(), [&](const Dataset& d) { return d.name == part.dataset; });
    if (it == suite.datasets.end() || !it->shard) return {trial};
    const long n = static_cast<long>(part.num_shards) * factor;
    if (it->samples && n > *it->samples) return {trial};
    std::vector<Trial> out;
    for (int k = 0; k < factor; ++k) {
        Trial t = trial;
        const int i = part.shard * factor + k;
        t.parts = {TrialPart{part.dataset, i, static_cast<int>(n)}};
        t.id = fmt::format("{}/{}#{}of{}", ckpt.name, part.dataset, i, n);
        t.prior.median_s = trial.prior.median_s / factor;
        t.prior.p90_s = trial.prior.p90_s / factor;
        t.command = suite.wrap(render_template(it->command, Values{{"checkpoint", ckpt.staged_path},
                                                                   {"dataset", part.dataset},
                                                                   {"shard", std::to_string(i)},
                                                                   {"num_shards", std::to_string(n)},
                                                                   {"output", output_dir(ckpt, t.parts.back())},
                                                                   {"gpus", std::to_string(trial.gpus)},
                                                                   {"samples", std::to_string(it->samples.value_or(0))}}));
        out.push_back(std::move(t));
    }
    return out;
}

TrialSet make_trials(const Suite& suite, const Checkpoint& ckpt, const PriorBook& priors, const TrialOptions& options) {
    const CostModel& cost = priors.cost_model();
    TrialSet set;
    std::map<std::string, std::vector<std::string>> trials_of;  // dataset -> trial ids

    struct Short {
        const Dataset* d;
        Estimate e;
    };
    std::vector<Short> shorts;

    for (const Dataset& d : suite.datasets) {
        Estimate e = priors.run_estimate(d, ckpt.model, d.gpus);
        const double samples = d.samples ? static_cast<double>(*d.samples) : 0;
        // Measured runs already include reading and tokenizing the dataset; guesses do not.
        if (e.source != PriorSource::history) {
            e.median_s += cost.preprocess_seconds(samples);
            e.p90_s += cost.preprocess_seconds(samples);
        }
        if (suite.bundle_command && e.p90_s < options.bundle_below_s) {
            shorts.push_back({&d, e});
            continue;
        }
        int n = 1;
        if (d.shard && e.median_s > options.shard_above_s) {
            n = static_cast<int>(std::ceil(e.median_s / options.shard_above_s));
            n = std::min(n, options.max_shards);
            if (d.samples) n = static_cast<int>(std::min<long>(n, *d.samples));
        }
        for (int i = 0; i < n; ++i) {
            Trial t;
            t.checkpoint = ckpt.name;
            t.parts.push_back({d.name, i, n});
            t.id = n == 1 ? fmt::format("{}/{}", ckpt.name, d.name) : fmt::format("{}/{}#{}of{}", ckpt.name, d.name, i, n);
            t.gpus = d.gpus;
            t.prior = Estimate{e.median_s / n, e.p90_s / n, e.source, e.runs};
            t.startup_s = priors.startup_seconds(ckpt.model, d.gpus);
            t.command = suite.wrap(render_template(d.command, Values{{"checkpoint", ckpt.staged_path},
                                                                     {"dataset", d.name},
                                                                     {"shard", std::to_string(i)},
                                                                     {"num_shards", std::to_string(n)},
                                                                     {"output", output_dir(ckpt, t.parts.back())},
                                                                     {"gpus", std::to_string(d.gpus)},
                                                                     {"samples", std::to_string(d.samples.value_or(0))}}));
            trials_of[d.name].push_back(t.id);
            set.trials.push_back(std::move(t));
        }
    }

    // Bundles: first-fit decreasing by GPU count into trials of about bundle_target_s, so one
    // load serves several short datasets. Deterministic: sorted by (gpus, median desc, name).
    std::sort(shorts.begin(), shorts.end(), [](const Short& a, const Short& b) {
        return std::tie(a.d->gpus, b.e.median_s, a.d->name) < std::tie(b.d->gpus, a.e.median_s, b.d->name);
    });
    // Each bundle's running sum is kept: summing every bundle per candidate made this cubic.
    std::vector<std::vector<Short>> bundles;
    std::vector<double> sums;
    for (const Short& s : shorts) {
        std::size_t i = 0;
        while (i < bundles.size() && !(bundles[i].front().d->gpus == s.d->gpus && sums[i] + s.e.median_s <= options.bundle_target_s)) ++i;
        if (i == bundles.size()) {
            bundles.push_back({s});
            sums.push_back(s.e.median_s);
        } else {
            bundles[i].push_back(s);
            sums[i] += s.e.median_s;
        }
    }
    int k = 0;
    for (const auto& b : bundles) {
        Trial t;
        t.checkpoint = ckpt.name;
        t.gpus = b.front().d->gpus;
        t.startup_s = priors.startup_seconds(ckpt.model, t.gpus);
        t.prior.source = PriorSource::history;
        std::string names;
        for (const auto& s : b) {
            t.parts.push_back({s.d->name, 0, 1});
            t.prior.median_s += s.e.median_s;
            t.prior.p90_s += s.e.p90_s;
            // A bundle is only as trustworthy as its least-known member.
            if (static_cast<int>(s.e.source) > static_cast<int>(t.prior.source)) t.prior.source = s.e.source;
            names += fmt::format("{}{}", names.empty() ? "" : ",", s.d->name);
        }
        if (b.size() == 1) {
            const Dataset& d = *b.front().d;
            t.id = fmt::format("{}/{}", ckpt.name, d.name);
            t.command = suite.wrap(render_template(d.command, Values{{"checkpoint", ckpt.staged_path}, {"dataset", d.name}, {"shard", "0"},
                                                                     {"num_shards", "1"}, {"output", output_dir(ckpt, t.parts.back())},
                                                                     {"gpus", std::to_string(d.gpus)},
                                                                     {"samples", std::to_string(d.samples.value_or(0))}}));
        } else {
            t.id = fmt::format("{}/bundle-{}", ckpt.name, k++);
            t.command = suite.wrap(render_template(*suite.bundle_command, Values{{"checkpoint", ckpt.staged_path}, {"datasets", names},
                                                                                 {"output", ckpt.output_root}, {"gpus", std::to_string(t.gpus)}}));
        }
        for (const auto& p : t.parts) trials_of[p.dataset].push_back(t.id);
        set.trials.push_back(std::move(t));
    }

    // Metric jobs, in suite order, each after every trial holding a piece of its dataset. Trials
    // are found by id through an index: a scan of every trial per dataset was quadratic (16,048
    // sharded datasets took minutes, issue 16).
    std::unordered_map<std::string_view, std::vector<std::size_t>> trial_at;
    trial_at.reserve(set.trials.size());
    for (std::size_t i = 0; i < set.trials.size(); ++i) trial_at[set.trials[i].id].push_back(i);
    for (const Dataset& d : suite.datasets) {
        MetricJob m;
        m.id = fmt::format("{}/{}:metric", ckpt.name, d.name);
        m.dataset = d.name;
        m.after = trials_of[d.name];
        const double samples = d.samples ? static_cast<double>(*d.samples) : 1000;
        m.estimate_s = d.metric_command ? cost.metric_seconds(d.kind, samples) : 0;
        if (d.metric_command)
            m.command = suite.wrap(
                render_template(*d.metric_command, Values{{"dataset", d.name}, {"output", fmt::format("{}/{}", ckpt.output_root, d.name)}}));
        for (const std::string& id : m.after)
            if (auto it = trial_at.find(id); it != trial_at.end())
                for (std::size_t i : it->second) set.trials[i].metric_s = std::max(set.trials[i].metric_s, m.estimate_s);
        set.metrics.push_back(std::move(m));
    }
    add_group_metrics(set, suite, ckpt, cost);
    return set;
}

void add_group_metrics(TrialSet& set, const Suite& suite, const Checkpoint& ckpt, const CostModel& cost) {
    if (suite.groups.empty() || !suite.group_metric_command) return;
    std::unordered_map<std::string_view, const Group*> group_of;  // leaf -> its group
    for (const Group& g : suite.groups)
        for (const auto& leaf : g.leaves) group_of[leaf] = &g;
    std::map<std::string, std::vector<std::string>> after;  // group -> trial ids, in trial order
    for (const Trial& t : set.trials) {
        std::set<const Group*> of;  // a bundle may hold several leaves of one group
        for (const auto& p : t.parts)
            if (auto it = group_of.find(p.dataset); it != group_of.end() && of.insert(it->second).second) after[it->second->name].push_back(t.id);
    }
    for (const Group& g : suite.groups) {
        MetricJob m;
        m.id = fmt::format("{}/{}:group", ckpt.name, g.name);
        m.dataset = g.name;
        m.after = after[g.name];
        std::string leaves, samples;
        for (std::size_t i = 0; i < g.leaves.size(); ++i) {
            leaves += fmt::format("{}{}", i ? "," : "", g.leaves[i]);
            samples += fmt::format("{}{}", i ? "," : "", g.leaf_samples[i]);
        }
        // It re-reads what the leaves' metric jobs read (every shard's per-sample output).
        m.estimate_s = cost.metric_seconds(g.kind, g.samples ? static_cast<double>(*g.samples) : 1000);
        m.command = suite.wrap(render_template(*suite.group_metric_command, Values{{"dataset", g.name},
                                                                                 {"output", fmt::format("{}/{}", ckpt.output_root, g.name)},
                                                                                 {"leaves", leaves},
                                                                                 {"leaf_samples", samples},
                                                                                 {"aggregate", std::string(to_string(g.aggregate))}}));
        set.group_metrics.push_back(std::move(m));
    }
}

}  // namespace acme::evalsched
