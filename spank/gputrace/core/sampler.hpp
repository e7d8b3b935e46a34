// One tick of GPU sampling and the XID/ECC events in between, for the job's GPUs only.
// The process around it (acme-gpu-sampler) owns timing, signals and the spool.
#pragma once

#include <string>
#include <vector>

#include "common/nvml/library.hpp"
#include "spank/gputrace/core/spool_writer.hpp"

namespace acme::telemetry {

class Sampler {
public:
    Sampler(nvml::Library& nvml, std::vector<nvml::Library::Device> devices);

    std::vector<Sample> sample(double ts);
    // Waits up to timeout_ms for an event, then takes whatever else is already queued.
    std::vector<GpuEvent> events(unsigned timeout_ms, double now);

    const std::vector<nvml::Library::Device>& devices() const { return devices_; }

private:
    nvml::Library& nvml_;
    std::vector<nvml::Library::Device> devices_;
    std::vector<bool> lost_reported_;
    std::vector<GpuEvent> pending_;
};

}  // namespace acme::telemetry
