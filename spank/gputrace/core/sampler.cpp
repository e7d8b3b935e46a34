#include "spank/gputrace/core/sampler.hpp"

#include <fmt/format.h>

namespace acme::telemetry {

Sampler::Sampler(nvml::Library& nvml, std::vector<nvml::Library::Device> devices)
    : nvml_(nvml), devices_(std::move(devices)), lost_reported_(devices_.size(), false) {
    nvml_.track(devices_);
}

std::vector<Sample> Sampler::sample(double ts) {
    std::vector<Sample> out;
    out.reserve(devices_.size());
    for (std::size_t i = 0; i < devices_.size(); ++i) {
        out.push_back(Sample{devices_[i].minor, ts, nvml_.read(devices_[i].handle)});
        // A GPU that fell off the bus sends nothing through the event set any more; record the
        // loss once, as NVML reported it, so the diagnosis sees it.
        if (out.back().reading.lost && !lost_reported_[i]) {
            lost_reported_[i] = true;
            pending_.push_back(GpuEvent{devices_[i].minor, ts, "gpu_lost", 79, "NVML: GPU is lost"});
        }
    }
    return out;
}

std::vector<GpuEvent> Sampler::events(unsigned timeout_ms, double now) {
    std::vector<GpuEvent> out = std::move(pending_);
    pending_.clear();
    auto first = nvml_.wait_event(timeout_ms);
    while (first) {
        const auto& e = *first;
        GpuEvent g{e.minor, now, "xid", static_cast<long long>(e.data), {}};
        if (e.type == nvml::kEventXid) {
            g.detail = fmt::format("Xid {}", e.data);
        } else if (e.type == nvml::kEventDbe) {
            g.kind = "ecc_dbe";
            g.detail = "double-bit ECC error";
        } else if (e.type == nvml::kEventSbe) {
            g.kind = "ecc_sbe";
            g.detail = "single-bit ECC error";
        } else {
            g.kind = "event";
            g.detail = fmt::format("NVML event type {:#x}", e.type);
        }
        out.push_back(std::move(g));
        if (out.size() >= 256) break;  // bound the work per tick; the rest waits for the next
        first = nvml_.wait_event(0);
    }
    return out;
}

}  // namespace acme::telemetry
