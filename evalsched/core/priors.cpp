#include "evalsched/core/priors.hpp"

#include <algorithm>
#include <cmath>

namespace acme::evalsched {

std::string_view to_string(PriorSource source) {
    switch (source) {
        case PriorSource::history: return "history";
        case PriorSource::suite: return "suite";
        case PriorSource::samples: return "samples";
        case PriorSource::unknown: return "unknown";
    }
    return "unknown";
}

std::pair<double, double> median_p90(std::deque<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    const double median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    const std::size_t rank = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(n)));
    return {median, values[std::max<std::size_t>(rank, 1) - 1]};
}

void PriorBook::add_run(const RunKey& key, double seconds, double fraction) {
    if (!(seconds > 0) || !(fraction > 0) || fraction > 1) return;
    auto& q = runs_[key];
    q.push_back(seconds / fraction);
    while (q.size() > window_) q.pop_front();
}

void PriorBook::add_stage(const std::string& node, double bytes, double seconds) {
    if (!(bytes > 0) || !(seconds > 0)) return;
    auto it = stage_bw_.find(node);
    if (it == stage_bw_.end()) it = stage_bw_.emplace(node, std::deque<double>{}).first;
    it->second.push_back(bytes / seconds);
    while (it->second.size() > window_) it->second.pop_front();
}

void PriorBook::add_startup(const std::string& size_class, int gpus, double seconds) {
    if (!(seconds > 0) || gpus < 1) return;
    auto& q = startups_[{size_class, gpus}];
    q.push_back(seconds);
    while (q.size() > window_) q.pop_front();
}

void PriorBook::add_window(const store::PriorWindow& window) {
    for (const auto& r : window.runs) add_run({r.dataset, r.size_class, r.gpus}, r.seconds, r.fraction);
    for (const auto& l : window.loads) add_stage(l.node, l.bytes, l.seconds);
    for (const auto& s : window.startups) add_startup(s.size_class, s.gpus, s.seconds);
}

std::size_t PriorBook::startups(const std::string& size_class, int gpus) const {
    auto it = startups_.find({size_class, gpus});
    return it == startups_.end() ? 0 : it->second.size();
}

double PriorBook::startup_seconds(const ModelSpec& model, int gpus) const {
    const std::string cls = size_class(model.params_b);
    if (auto it = startups_.find({cls, gpus}); it != startups_.end() && !it->second.empty()) return median_p90(it->second).first;
    // Another GPU count of the same size class: every GPU loads its replica at once, so the
    // startup hardly depends on the count. All of them pooled, for a steadier median.
    std::deque<double> pooled;
    for (auto it = startups_.lower_bound({cls, 0}); it != startups_.end() && it->first.first == cls; ++it)
        pooled.insert(pooled.end(), it->second.begin(), it->second.end());
    if (!pooled.empty()) return median_p90(std::move(pooled)).first;
    return model_.trial_startup_seconds(model.checkpoint_bytes);
}

std::size_t PriorBook::runs(const RunKey& key) const {
    auto it = runs_.find(key);
    return it == runs_.end() ? 0 : it->second.size();
}

Estimate PriorBook::run_estimate(const Dataset& dataset, const ModelSpec& model, int gpus) const {
    const std::string cls = size_class(model.params_b);
    auto from_history = [&](const std::deque<double>& q, double scale) {
        auto [median, p90] = median_p90(q);
        // With few runs the sample p90 is just the max; widen it so the first TIMEOUT does not
        // come from having seen only lucky runs.
        if (q.size() < 5) p90 = std::max(p90, *std::max_element(q.begin(), q.end()) * 1.25);
        return Estimate{median * scale, p90 * scale, PriorSource::history, static_cast<int>(q.size())};
    };
    if (auto it = runs_.find(RunKey{dataset.name, cls, gpus}); it != runs_.end() && !it->second.empty())
        return from_history(it->second, 1.0);
    // Same dataset and size class at another GPU count: rescale by the cost model's GPU law.
    for (const auto& [key, q] : runs_) {
        if (key.dataset == dataset.name && key.size_class == cls && !q.empty()) {
            const double ratio = model_.run_seconds(dataset.kind, 1000, 7, gpus) / model_.run_seconds(dataset.kind, 1000, 7, key.gpus);
            Estimate e = from_history(q, ratio);
            e.p90_s *= 1.2;  // the rescaling is a guess
            return e;
        }
    }
    const double size_scale = std::max(model.params_b, 0.1) / 7.0;
    const double gpu_scale = model_.run_seconds(dataset.kind, 1000, 7, gpus) / model_.run_seconds(dataset.kind, 1000, 7, 1);
    if (dataset.prior_s) {
        const double m = *dataset.prior_s * size_scale * gpu_scale;
        return Estimate{m, m * 1.5, PriorSource::suite, 0};
    }
    if (dataset.samples) {
        const double m = model_.run_seconds(dataset.kind, static_cast<double>(*dataset.samples), model.params_b, gpus);
        return Estimate{m, m * 2.0, PriorSource::samples, 0};
    }
    const double m = model_.unknown_dataset_s * size_scale * gpu_scale;
    return Estimate{m, m * 2.0, PriorSource::unknown, 0};
}

double PriorBook::stage_seconds(std::string_view node, double bytes) const {
    auto it = stage_bw_.find(node);
    const double bw = it != stage_bw_.end() && !it->second.empty() ? median_p90(it->second).first : default_stage_bytes_per_s;
    return bytes / bw;
}

}  // namespace acme::evalsched
