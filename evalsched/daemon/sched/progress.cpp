#include "evalsched/daemon/sched/progress.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/util/parse.hpp"

namespace acme::evalsched {

using nlohmann::json;

namespace {

std::string text(const json& o, const char* key) {
    auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

long number(const json& o, const char* key, long otherwise) {
    auto it = o.find(key);
    return it != o.end() && it->is_number_integer() ? it->get<long>() : otherwise;
}

// The samples of shard `shard` of `num_shards` of a dataset of `total` (all of it unsharded).
long shard_samples(long total, long shard, long num_shards) {
    if (num_shards <= 1 || shard < 0 || shard >= num_shards) return total;
    // Suites bound samples to 1e8 and no dataset has more shards than samples: the product fits a long.
    const auto at = [&](long i) { return i * total / num_shards; };
    return at(shard + 1) - at(shard);
}

struct Dataset {
    std::string name;
    int pieces = 0, done = 0, running = 0, failed = 0, cancelled = 0;
    long samples_done = 0;  // in the pieces done (samples known)
    std::set<std::string> nodes;
    std::string failure, evidence, log;  // of the first piece that failed
    const json* metric = nullptr;
    json scores = json::object();
};

}  // namespace

json dataset_progress(const json& trials, const json& metrics, const json& scores, const json& samples) {
    auto samples_of = [&](const std::string& name) -> long {
        auto it = samples.is_object() ? samples.find(name) : samples.end();
        return it != samples.end() && it->is_number_integer() && it->get<long>() > 0 ? it->get<long>() : 0L;
    };
    std::vector<Dataset> order;
    std::map<std::string, std::size_t> index;
    auto of = [&](const std::string& name) -> Dataset& {
        auto [it, fresh] = index.try_emplace(name, order.size());
        if (fresh) {
            order.emplace_back();
            order.back().name = name;
        }
        return order[it->second];
    };
    for (const auto& t : trials) {
        const std::string state = text(t, "state");
        for (const auto& name : util::split_list(text(t, "datasets"))) {
            Dataset& d = of(name);
            ++d.pieces;
            if (state == "done") {
                ++d.done;
                d.samples_done += shard_samples(samples_of(name), number(t, "shard", 0), number(t, "num_shards", 1));
            }
            else if (state == "running") {
                ++d.running;
                if (const std::string node = text(t, "node"); !node.empty()) d.nodes.insert(node);
            } else if (state == "failed") {
                if (d.failed++ == 0) {
                    d.failure = text(t, "reason");
                    d.evidence = text(t, "evidence");
                    d.log = text(t, "log");
                }
            } else if (state == "cancelled") ++d.cancelled;
        }
    }
    for (const auto& m : metrics)
        if (auto it = index.find(text(m, "dataset")); it != index.end()) order[it->second].metric = &m;
    for (const auto& s : scores)
        if (auto it = index.find(text(s, "dataset")); it != index.end() && s.contains("value"))
            order[it->second].scores[text(s, "metric")] = s["value"];

    json counts{{"total", order.size()}, {"scored", 0}, {"scoring", 0}, {"running", 0}, {"queued", 0}, {"failed", 0}, {"cancelled", 0}};
    long samples_total = 0, samples_done = 0, samples_datasets = 0;
    json list = json::array();
    for (const Dataset& d : order) {
        std::string state, detail, evidence, log;
        const std::string mstate = d.metric ? text(*d.metric, "state") : std::string();
        if (d.failed) {
            state = "failed";
            detail = d.failure.empty() ? "a trial failed" : d.failure;
            evidence = d.evidence;
            log = d.log;
        } else if (mstate == "failed") {
            state = "failed";
            detail = "metric job: " + (text(*d.metric, "reason").empty() ? std::string("failed") : text(*d.metric, "reason"));
            evidence = text(*d.metric, "evidence");
            log = text(*d.metric, "log");
        } else if (d.cancelled || mstate == "cancelled") {
            state = "cancelled";
        } else if (d.done == d.pieces && (!d.metric || mstate == "done")) {
            state = "scored";
            if (d.scores.empty()) detail = "no score reported";
        } else if (d.done == d.pieces) {
            state = "scoring";
            const std::string node = text(*d.metric, "node");
            detail = mstate == "running" ? "metric job running" + (node.empty() ? "" : " on " + node) : "metric job " + mstate;
        } else if (d.running) {
            state = "running";
            std::string nodes;
            for (const auto& n : d.nodes) nodes += (nodes.empty() ? "" : ",") + n;
            detail = nodes.empty() ? "running" : "on " + nodes;
        } else {
            state = "queued";
        }
        const long total = samples_of(d.name);
        // Pieces cut by the suite's count: a piece done is its samples done. Cut otherwise (a
        // count the trials were not cut by), only a dataset done counts them all.
        const long done = d.done == d.pieces ? total : std::min(d.samples_done, total);
        if (d.pieces > 1 && (state == "running" || state == "queued")) {
            detail += fmt::format("{}{}/{} pieces done", detail.empty() ? "" : ", ", d.done, d.pieces);
            if (total > 0) detail += fmt::format(" ({}/{} samples)", done, total);
        }
        counts[state] = counts[state].get<int>() + 1;
        if (total > 0) {
            samples_total += total;
            samples_done += done;
            ++samples_datasets;
        }
        json nodes = json::array();
        for (const auto& n : d.nodes) nodes.push_back(n);
        list.push_back({{"dataset", d.name}, {"state", state}, {"detail", detail}, {"nodes", nodes}, {"pieces", d.pieces},
                        {"pieces_done", d.done}, {"scores", d.scores}, {"samples", total > 0 ? json(total) : json(nullptr)},
                        {"samples_done", total > 0 ? json(done) : json(nullptr)}});
        // A failed dataset says why in its log's words and where that log is (its trial's or
        // its metric job's), where the rows carry them (evaluation_json's do).
        if (state == "failed" && (!evidence.empty() || !log.empty())) {
            list.back()["evidence"] = evidence;
            list.back()["log"] = log;
        }
    }
    counts["samples_total"] = samples_total;
    counts["samples_done"] = samples_done;
    counts["samples_datasets"] = samples_datasets;
    return {{"datasets", counts}, {"dataset_list", list}};
}

json dataset_counts(const json& trials, const json& metrics, const json& scores, const json& samples) {
    return dataset_progress(trials, metrics, scores, samples)["datasets"];
}

}  // namespace acme::evalsched
