// The acme job record (JSON, version 1): what acme-slurm knows of one run of one job, merged
// from every node's epilog into the run's AdminComment in slurmdbd (see acme-record(5)):
//
//   {"v":1, "job":42, "restart":0, "expected":["n1","n2"],
//    "nodes":{"n1":{"gpus":[...], "events":[...], "diagnosis":{...}, "recovery":{...},
//                   "gate":{...}}, "n2":{...}},
//    "trimmed":0}
//
// Each node writes only its own part; a node of "expected" without a part is missing (its
// epilog never reported). Pure functions: the slurmdbd side is common/slurm/admin_comment.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace acme::record {

inline constexpr int kVersion = 1;

// `existing` (the run's current record, if any) with `node`'s part put in. A record of another
// job or run, or of a version this code does not know, is replaced rather than merged.
nlohmann::json merge_node_part(const std::optional<nlohmann::json>& existing, long long job, long long restart,
                               const std::vector<std::string>& expected, const std::string& node,
                               nlohmann::json part);

// The record as an AdminComment token no longer than kMaxTokenBytes: per-GPU detail is folded
// into per-node totals first ("trimmed":1), then evidence and outcome texts go ("trimmed":2).
std::string encode_within_budget(nlohmann::json record);

// Parses a decoded token's JSON; nullopt with a one-line `error` when it is not a version-1
// record of this shape.
std::optional<nlohmann::json> parse_record(std::string_view json, std::string& error);

bool has_node(const nlohmann::json& record, const std::string& node);
// The expected nodes without a part, in the order of "expected".
std::vector<std::string> missing_nodes(const nlohmann::json& record);

}  // namespace acme::record
