#include "spank/faultguard/core/record_part.hpp"

#include <cmath>

#include "common/util/parse.hpp"

namespace acme::faultguard {
namespace {

using nlohmann::json;

// Plain ASCII (JSON-safe whatever the log held), at most kRecordTextChars bytes and "...".
std::string short_text(const std::string& text) { return util::printable(text, kRecordTextChars); }

double round1(double v) { return std::round(v * 10) / 10; }

}  // namespace

json node_part(const NodePartInputs& in) {
    json part = json::object();
    json gpus = json::array();
    for (const auto& g : in.gpus) {
        json j = {{"id", g.gpu}, {"samples", g.samples}, {"xids", g.xids}, {"verdict", g.verdict}};
        if (!g.uuid.empty()) j["uuid"] = g.uuid;
        if (g.util_avg) j["util_avg"] = round1(*g.util_avg);
        if (g.util_max) j["util_max"] = round1(*g.util_max);
        if (g.mem_max) j["mem_max_mib"] = *g.mem_max / (1024 * 1024);
        if (g.mem_total) j["mem_total_mib"] = *g.mem_total / (1024 * 1024);
        if (g.power_avg_mw) j["power_avg_w"] = round1(*g.power_avg_mw / 1000);
        if (g.power_max_mw) j["power_max_w"] = round1(static_cast<double>(*g.power_max_mw) / 1000);
        if (g.energy_mj) j["energy_j"] = round1(static_cast<double>(*g.energy_mj) / 1000);
        if (g.temp_max) j["temp_max_c"] = *g.temp_max;
        if (g.ecc_uncorrected_delta) j["ecc_dbe"] = *g.ecc_uncorrected_delta;
        if (g.gpm_sm_avg) j["gpm_sm_avg"] = round1(*g.gpm_sm_avg);
        if (g.gpm_tensor_avg) j["gpm_tensor_avg"] = round1(*g.gpm_tensor_avg);
        if (g.gpm_dram_bw_avg) j["gpm_dram_bw_avg"] = round1(*g.gpm_dram_bw_avg);
        gpus.push_back(std::move(j));
    }
    part["gpus"] = std::move(gpus);
    if (!in.events.empty()) {
        json events = json::array();
        for (std::size_t i = 0; i < in.events.size() && i < kRecordEvents; ++i) {
            const auto& e = in.events[i];
            json j = {{"gpu", e.gpu}, {"kind", e.kind}, {"ts", std::floor(e.ts)}};
            if (e.code) j["code"] = *e.code;
            events.push_back(std::move(j));
        }
        if (in.events.size() > kRecordEvents) part["events_total"] = in.events.size();
        part["events"] = std::move(events);
    }
    if (in.diagnosis) {
        const auto& d = *in.diagnosis;
        json evidence = json::array();
        for (std::size_t i = 0; i < d.evidence.size() && i < kRecordEvidence; ++i) {
            json e = {{"source", d.evidence[i].source}, {"text", short_text(d.evidence[i].text)}};
            if (d.evidence[i].line > 0) e["line"] = d.evidence[i].line;
            evidence.push_back(std::move(e));
        }
        part["diagnosis"] = {{"category", diagnose::to_string(d.category)},
                             {"reason", d.reason},
                             {"confidence", std::round(d.confidence * 100) / 100},
                             {"action", diagnose::to_string(d.action)},
                             {"rule", d.rule},
                             {"evidence", std::move(evidence)}};
    }
    if (in.recovery) {
        part["recovery"] = {{"drained", in.recovery->drained},
                            {"requeued", in.recovery->requeued},
                            {"outcome", short_text(in.recovery->outcome)}};
        if (in.recovery->drained) part["recovery"]["drain_reason"] = short_text(in.recovery->drain_reason);
    }
    if (in.stall) {
        part["stall"] = {{"since", std::floor(in.stall->since)}, {"ts", std::floor(in.stall->ts)},
                         {"hardware", in.stall->hardware}, {"action", short_text(in.stall->action)},
                         {"evidence", short_text(in.stall->evidence)}};
        if (!in.stall->named_node.empty()) part["stall"]["named"] = in.stall->named_node;
        if (in.stall->withdrawn) part["stall"]["withdrawn"] = true;
    }
    if (in.resumed_from) part["resumed_from"] = util::printable(*in.resumed_from, 4 * kRecordTextChars);
    if (in.gate) part["gate"] = {{"passed", in.gate->passed}, {"detail", short_text(in.gate->detail)}};
    part["ts"] = std::floor(in.epilog_ts);
    return part;
}

}  // namespace acme::faultguard
