#include "spank/faultguard/core/record_part.hpp"

#include <cmath>

#include "common/record/keys.hpp"
#include "common/util/parse.hpp"

namespace acme::faultguard {
namespace {

using nlohmann::json;

// Plain ASCII (JSON-safe whatever the log held), at most kRecordTextChars bytes and "...".
std::string short_text(const std::string& text) { return util::printable(text, kRecordTextChars); }

double round1(double v) { return std::round(v * 10) / 10; }

}  // namespace

json node_part(const NodePartInputs& in) {
    namespace key = record::key;
    json part = json::object();
    json gpus = json::array();
    for (const auto& g : in.gpus) {
        json j = {{key::gpu::id, g.gpu}, {key::gpu::samples, g.samples}, {key::gpu::xids, g.xids}, {key::gpu::verdict, g.verdict}};
        if (!g.uuid.empty()) j[key::gpu::uuid] = g.uuid;
        if (g.util_avg) j[key::gpu::util_avg] = round1(*g.util_avg);
        if (g.util_max) j[key::gpu::util_max] = round1(*g.util_max);
        if (g.mem_max) j[key::gpu::mem_max_mib] = *g.mem_max / (1024 * 1024);
        if (g.mem_total) j[key::gpu::mem_total_mib] = *g.mem_total / (1024 * 1024);
        if (g.power_avg_mw) j[key::gpu::power_avg_w] = round1(*g.power_avg_mw / 1000);
        if (g.power_max_mw) j[key::gpu::power_max_w] = round1(static_cast<double>(*g.power_max_mw) / 1000);
        if (g.energy_mj) j[key::gpu::energy_j] = round1(static_cast<double>(*g.energy_mj) / 1000);
        if (g.temp_max) j[key::gpu::temp_max_c] = *g.temp_max;
        if (g.ecc_uncorrected) j[key::gpu::ecc_dbe] = *g.ecc_uncorrected;
        if (g.gpm_sm_avg) j[key::gpu::gpm_sm_avg] = round1(*g.gpm_sm_avg);
        if (g.gpm_tensor_avg) j[key::gpu::gpm_tensor_avg] = round1(*g.gpm_tensor_avg);
        if (g.gpm_dram_bw_avg) j[key::gpu::gpm_dram_bw_avg] = round1(*g.gpm_dram_bw_avg);
        gpus.push_back(std::move(j));
    }
    part[key::part::gpus] = std::move(gpus);
    if (!in.events.empty()) {
        json events = json::array();
        for (std::size_t i = 0; i < in.events.size() && i < kRecordEvents; ++i) {
            const auto& e = in.events[i];
            json j = {{key::event::gpu, e.gpu}, {key::event::kind, e.kind}, {key::event::ts, std::floor(e.ts)}};
            if (e.code) j[key::event::code] = *e.code;
            events.push_back(std::move(j));
        }
        if (in.events.size() > kRecordEvents) part[key::part::events_total] = in.events.size();
        part[key::part::events] = std::move(events);
    }
    if (in.diagnosis) {
        const auto& d = *in.diagnosis;
        json evidence = json::array();
        for (std::size_t i = 0; i < d.evidence.size() && i < kRecordEvidence; ++i) {
            json e = {{key::evidence::source, d.evidence[i].source}, {key::evidence::text, short_text(d.evidence[i].text)}};
            if (d.evidence[i].line > 0) e[key::evidence::line] = d.evidence[i].line;
            evidence.push_back(std::move(e));
        }
        part[key::part::diagnosis] = {{key::diagnosis::category, diagnose::to_string(d.category)},
                                      {key::diagnosis::reason, d.reason},
                                      {key::diagnosis::confidence, std::round(d.confidence * 100) / 100},
                                      {key::diagnosis::action, diagnose::to_string(d.action)},
                                      {key::diagnosis::rule, d.rule},
                                      {key::diagnosis::evidence, std::move(evidence)}};
    }
    if (in.recovery) {
        json& recovery = part[key::part::recovery];
        recovery = {{key::recovery::drained, in.recovery->drained},
                    {key::recovery::requeued, in.recovery->requeued},
                    {key::recovery::outcome, short_text(in.recovery->outcome)}};
        if (in.recovery->drained) recovery[key::recovery::drain_reason] = short_text(in.recovery->drain_reason);
    }
    if (in.stall) {
        json& stall = part[key::part::stall];
        stall = {{key::stall::since, std::floor(in.stall->since)}, {key::stall::ts, std::floor(in.stall->ts)},
                 {key::stall::hardware, in.stall->hardware}, {key::stall::action, short_text(in.stall->action)},
                 {key::stall::evidence, short_text(in.stall->evidence)}};
        if (!in.stall->named_node.empty()) stall[key::stall::named] = in.stall->named_node;
        if (in.stall->withdrawn) stall[key::stall::withdrawn] = true;
    }
    if (in.resumed_from) part[key::part::resumed_from] = util::printable(*in.resumed_from, 4 * kRecordTextChars);
    if (in.resumed_from && in.resumed_ckpt_ts) part[key::part::resumed_ckpt_ts] = std::floor(*in.resumed_ckpt_ts);
    if (in.gate) part[key::part::gate] = {{key::gate::passed, in.gate->passed}, {key::gate::detail, short_text(in.gate->detail)}};
    part[key::part::ts] = std::floor(in.epilog_ts);
    return part;
}

void take_resume_line(std::string line, NodePartInputs& in) {
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (const auto tab = line.rfind('\t'); tab != std::string::npos) {
        if (const auto ts = util::parse_int(line.substr(tab + 1)); ts && *ts > 0) {
            in.resumed_ckpt_ts = static_cast<double>(*ts);
            line.resize(tab);
        }
    }
    in.resumed_from = std::move(line);
}

}  // namespace acme::faultguard
