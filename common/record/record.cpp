#include "common/record/record.hpp"

#include <algorithm>
#include <cmath>

#include "common/record/codec.hpp"

namespace acme::record {
namespace {

using nlohmann::json;

// Per-GPU rows folded into one object per node: what a report needs when the detail of a very
// large job does not fit the field.
json gpu_totals(const json& gpus) {
    json t = {{"count", gpus.size()}};
    double util_sum = 0, util_n = 0, util_max = -1, mem_max = -1, energy = 0;
    long long xids = 0;
    std::vector<std::string> verdicts;
    for (const auto& g : gpus) {
        if (g.contains("util_avg") && g["util_avg"].is_number()) util_sum += g["util_avg"].get<double>(), ++util_n;
        if (g.contains("util_max") && g["util_max"].is_number()) util_max = std::max(util_max, g["util_max"].get<double>());
        if (g.contains("mem_max_mib") && g["mem_max_mib"].is_number())
            mem_max = std::max(mem_max, g["mem_max_mib"].get<double>());
        if (g.contains("energy_j") && g["energy_j"].is_number()) energy += g["energy_j"].get<double>();
        if (g.contains("xids") && g["xids"].is_number_integer()) xids += g["xids"].get<long long>();
        if (g.contains("verdict") && g["verdict"].is_string()) {
            const auto v = g["verdict"].get<std::string>();
            if (std::find(verdicts.begin(), verdicts.end(), v) == verdicts.end()) verdicts.push_back(v);
        }
    }
    if (util_n > 0) t["util_avg"] = std::round(util_sum / util_n * 10) / 10;
    if (util_max >= 0) t["util_max"] = util_max;
    if (mem_max >= 0) t["mem_max_mib"] = mem_max;
    t["energy_j"] = energy;
    t["xids"] = xids;
    t["verdicts"] = verdicts;
    return t;
}

}  // namespace

json merge_node_part(const std::optional<json>& existing, long long job, long long restart,
                     const std::vector<std::string>& expected, const std::string& node, json part) {
    json r;
    if (existing && existing->is_object() && existing->value("v", 0) == kVersion && existing->value("job", -1LL) == job &&
        existing->value("restart", -1LL) == restart && existing->contains("nodes") && (*existing)["nodes"].is_object())
        r = *existing;
    else
        r = {{"v", kVersion}, {"job", job}, {"restart", restart}, {"nodes", json::object()}, {"trimmed", 0}};
    // Every node knows the job's node list; the longest one seen wins (they are the same list).
    if (!r.contains("expected") || !r["expected"].is_array() || r["expected"].size() < expected.size())
        r["expected"] = expected;
    r["nodes"][node] = std::move(part);
    return r;
}

std::string encode_within_budget(json record) {
    std::string token = encode_token(record.dump());
    if (token.size() <= kMaxTokenBytes) return token;
    for (auto& [name, part] : record["nodes"].items()) {
        if (part.contains("gpus") && part["gpus"].is_array()) {
            part["gpu_totals"] = gpu_totals(part["gpus"]);
            part.erase("gpus");
        }
    }
    record["trimmed"] = 1;
    token = encode_token(record.dump());
    if (token.size() <= kMaxTokenBytes) return token;
    for (auto& [name, part] : record["nodes"].items()) {
        part.erase("events");
        if (part.contains("diagnosis") && part["diagnosis"].is_object()) part["diagnosis"].erase("evidence");
        if (part.contains("recovery") && part["recovery"].is_object()) part["recovery"].erase("outcome");
        if (part.contains("gate") && part["gate"].is_object()) part["gate"].erase("detail");
        if (part.contains("stall") && part["stall"].is_object()) part["stall"].erase("evidence");
    }
    record["trimmed"] = 2;
    return encode_token(record.dump());
}

std::optional<json> parse_record(std::string_view text, std::string& error) {
    json r = json::parse(text, nullptr, false);
    if (r.is_discarded() || !r.is_object()) {
        error = "the ACME1 record is not a JSON object";
        return std::nullopt;
    }
    if (!r.contains("v") || !r["v"].is_number_integer() || r["v"].get<int>() != kVersion) {
        error = "the ACME1 record has an unknown version (this gpuacct reads version 1): upgrade acme-slurm-tools";
        return std::nullopt;
    }
    if (!r.contains("job") || !r["job"].is_number_integer() || !r.contains("nodes") || !r["nodes"].is_object()) {
        error = "the ACME1 record lacks its job id or its nodes";
        return std::nullopt;
    }
    for (const auto& [name, part] : r["nodes"].items())
        if (!part.is_object()) {
            error = "the ACME1 record's part for node " + name + " is not an object";
            return std::nullopt;
        }
    if (r.contains("expected") && !r["expected"].is_array()) {
        error = "the ACME1 record's expected nodes are not a list";
        return std::nullopt;
    }
    return r;
}

bool has_node(const json& record, const std::string& node) {
    return record.contains("nodes") && record["nodes"].is_object() && record["nodes"].contains(node);
}

std::vector<std::string> missing_nodes(const json& record) {
    std::vector<std::string> out;
    if (!record.contains("expected") || !record["expected"].is_array()) return out;
    for (const auto& n : record["expected"])
        if (n.is_string() && !has_node(record, n.get<std::string>())) out.push_back(n.get<std::string>());
    return out;
}

}  // namespace acme::record
