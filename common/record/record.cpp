#include "common/record/record.hpp"

#include <algorithm>
#include <cmath>

#include "common/record/codec.hpp"
#include "common/record/keys.hpp"

namespace acme::record {
namespace {

using nlohmann::json;

// Per-GPU rows folded into one object per node: what a report needs when the detail of a very
// large job does not fit the field.
json gpu_totals(const json& gpus) {
    json t = {{key::totals::count, gpus.size()}};
    double util_sum = 0, util_n = 0, util_max = -1, mem_max = -1, energy = 0;
    long long xids = 0;
    std::vector<std::string> verdicts;
    auto number = [](const json& g, const char* name) { return g.contains(name) && g[name].is_number(); };
    for (const auto& g : gpus) {
        if (number(g, key::gpu::util_avg)) util_sum += g[key::gpu::util_avg].get<double>(), ++util_n;
        if (number(g, key::gpu::util_max)) util_max = std::max(util_max, g[key::gpu::util_max].get<double>());
        if (number(g, key::gpu::mem_max_mib)) mem_max = std::max(mem_max, g[key::gpu::mem_max_mib].get<double>());
        if (number(g, key::gpu::energy_j)) energy += g[key::gpu::energy_j].get<double>();
        if (g.contains(key::gpu::xids) && g[key::gpu::xids].is_number_integer()) xids += g[key::gpu::xids].get<long long>();
        if (g.contains(key::gpu::verdict) && g[key::gpu::verdict].is_string()) {
            const auto v = g[key::gpu::verdict].get<std::string>();
            if (std::find(verdicts.begin(), verdicts.end(), v) == verdicts.end()) verdicts.push_back(v);
        }
    }
    if (util_n > 0) t[key::gpu::util_avg] = std::round(util_sum / util_n * 10) / 10;
    if (util_max >= 0) t[key::gpu::util_max] = util_max;
    if (mem_max >= 0) t[key::gpu::mem_max_mib] = mem_max;
    t[key::gpu::energy_j] = energy;
    t[key::gpu::xids] = xids;
    t[key::totals::verdicts] = verdicts;
    return t;
}

// `part[name]`, when it is an object, without `field`.
void erase_from(json& part, const char* name, const char* field) {
    if (part.contains(name) && part[name].is_object()) part[name].erase(field);
}

}  // namespace

json merge_node_part(const std::optional<json>& existing, long long job, long long restart,
                     const std::vector<std::string>& expected, const std::string& node, json part) {
    json r;
    if (existing && existing->is_object() && existing->value(key::version, 0) == kVersion &&
        existing->value(key::job, -1LL) == job && existing->value(key::restart, -1LL) == restart &&
        existing->contains(key::nodes) && (*existing)[key::nodes].is_object())
        r = *existing;
    else
        r = {{key::version, kVersion}, {key::job, job}, {key::restart, restart}, {key::nodes, json::object()}, {key::trimmed, 0}};
    // Every node knows the job's node list; the longest one seen wins (they are the same list).
    if (!r.contains(key::expected) || !r[key::expected].is_array() || r[key::expected].size() < expected.size())
        r[key::expected] = expected;
    r[key::nodes][node] = std::move(part);
    return r;
}

std::string encode_within_budget(json record) {
    std::string token = encode_token(record.dump());
    if (token.size() <= kMaxTokenBytes) return token;
    for (auto& [name, part] : record[key::nodes].items()) {
        if (part.contains(key::part::gpus) && part[key::part::gpus].is_array()) {
            part[key::part::gpu_totals] = gpu_totals(part[key::part::gpus]);
            part.erase(key::part::gpus);
        }
    }
    record[key::trimmed] = 1;
    token = encode_token(record.dump());
    if (token.size() <= kMaxTokenBytes) return token;
    for (auto& [name, part] : record[key::nodes].items()) {
        part.erase(key::part::events);
        erase_from(part, key::part::diagnosis, key::diagnosis::evidence);
        erase_from(part, key::part::recovery, key::recovery::outcome);
        erase_from(part, key::part::gate, key::gate::detail);
        erase_from(part, key::part::stall, key::stall::evidence);
    }
    record[key::trimmed] = 2;
    return encode_token(record.dump());
}

std::optional<json> parse_record(std::string_view text, std::string& error) {
    json r = json::parse(text, nullptr, false);
    if (r.is_discarded() || !r.is_object()) {
        error = "the ACME1 record is not a JSON object";
        return std::nullopt;
    }
    if (!r.contains(key::version) || !r[key::version].is_number_integer() || r[key::version].get<int>() != kVersion) {
        error = "the ACME1 record has an unknown version (this gpuacct reads version 1): upgrade acme-slurm-tools";
        return std::nullopt;
    }
    if (!r.contains(key::job) || !r[key::job].is_number_integer() || !r.contains(key::nodes) || !r[key::nodes].is_object()) {
        error = "the ACME1 record lacks its job id or its nodes";
        return std::nullopt;
    }
    for (const auto& [name, part] : r[key::nodes].items())
        if (!part.is_object()) {
            error = "the ACME1 record's part for node " + name + " is not an object";
            return std::nullopt;
        }
    if (r.contains(key::expected) && !r[key::expected].is_array()) {
        error = "the ACME1 record's expected nodes are not a list";
        return std::nullopt;
    }
    return r;
}

bool has_node(const json& record, const std::string& node) {
    return record.contains(key::nodes) && record[key::nodes].is_object() && record[key::nodes].contains(node);
}

std::vector<std::string> missing_nodes(const json& record) {
    std::vector<std::string> out;
    if (!record.contains(key::expected) || !record[key::expected].is_array()) return out;
    for (const auto& n : record[key::expected])
        if (n.is_string() && !has_node(record, n.get<std::string>())) out.push_back(n.get<std::string>());
    return out;
}

}  // namespace acme::record
