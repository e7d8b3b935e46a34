// NVML loaded at run time with dlopen: no link-time dependency on the driver, so the same
// binaries run on login nodes without one, and tests load a fake through the same path.
// Required symbols missing: open() fails. Optional ones missing: that metric is skipped.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/nvml/nvml_api.hpp"

namespace acme::nvml {

// One GPU's readings at one instant. Absent: the GPU or driver does not support it.
struct Reading {
    std::optional<double> util_gpu, util_mem;
    std::optional<long long> mem_used, mem_total;
    std::optional<long long> power_mw, energy_mj, temp_c, sm_clock_mhz;
    std::optional<long long> throttle_reasons;
    std::optional<long long> ecc_corrected, ecc_uncorrected;  // volatile totals
    std::optional<long long> retired_pending, remap_pending, remap_failure;
    std::optional<double> gpm_sm_util, gpm_tensor_util, gpm_dram_bw_util;
    bool lost = false;  // NVML said GPU_IS_LOST
};

struct Event {
    int minor = -1;
    unsigned long long type = 0;
    unsigned long long data = 0;  // XID number for XID events
};

class Library {
public:
    // Loads `path` (a file name searched by the dynamic loader, or a path) and initialises
    // NVML. Returns null and sets `error` (one line) on failure.
    static std::unique_ptr<Library> open(const std::string& path, std::string& error);
    ~Library();
    Library(const Library&) = delete;
    Library& operator=(const Library&) = delete;

    // Device handles keyed by minor number (the N of /dev/nvidiaN, what gres.conf File= names
    // and Slurm's GPU ids count), never by NVML's enumeration order.
    struct Device {
        int minor;
        nvmlDevice_t handle;
        std::string name, uuid;
    };
    std::vector<Device> devices(std::string& error) const;

    Reading read(nvmlDevice_t device) const;
    // The pids of the compute processes NVML lists on the device; nullopt where the driver cannot
    // tell (no such call, NOT_SUPPORTED, no permission): unknown, never "none".
    std::optional<std::vector<unsigned>> processes(nvmlDevice_t device) const;

    // The devices this process samples: GPM keeps a previous sample for each, events are
    // registered for them.
    void track(std::vector<Device> devices);
    // Registers XID and ECC events for the tracked devices. False (with error) if unsupported.
    bool watch_events(std::string& error);
    // Waits up to timeout_ms for one event. nullopt on timeout or when events are not watched.
    std::optional<Event> wait_event(unsigned timeout_ms);

    std::string error_string(nvmlReturn_t rc) const;
    // Shuts NVML down and initialises it again, the library staying loaded: a fresh view of the
    // node (a resident health gate sees what a newly started one would, at none of the cost of
    // loading the driver's library again). Only for a Library that tracks nothing; false (with
    // error) when NVML cannot be initialised again (the Library is then of no further use).
    bool reinit(std::string& error);
    // Shuts NVML down until reinit (the library stays loaded); nothing when it is not initialised.
    void shutdown();

    struct Api;  // the dlsym'ed function table

private:
    Library() = default;
    void* handle_ = nullptr;
    bool live_ = false;  // initialised and not shut down
    std::unique_ptr<Api> api_;
    nvmlEventSet_t events_ = nullptr;
    std::vector<Device> watched_;
    mutable std::vector<nvmlGpmSample_t> gpm_previous_;  // per watched device, for GPM deltas
};

}  // namespace acme::nvml
