#include "common/nvml/library.hpp"

#include <dlfcn.h>

#include <cstring>

#include <fmt/format.h>

namespace acme::nvml {

struct Library::Api {
    // required
    nvmlReturn_t (*init)(unsigned) = nullptr;  // nvmlInitWithFlags, or nvmlInit_v2 wrapped
    nvmlReturn_t (*init_v2)() = nullptr;
    nvmlReturn_t (*shutdown)() = nullptr;
    nvmlReturn_t (*count)(unsigned*) = nullptr;
    nvmlReturn_t (*by_index)(unsigned, nvmlDevice_t*) = nullptr;
    nvmlReturn_t (*minor)(nvmlDevice_t, unsigned*) = nullptr;
    const char* (*error_string)(nvmlReturn_t) = nullptr;
    // optional
    nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
    nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned) = nullptr;
    nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
    nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
    nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;
    nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long*) = nullptr;
    nvmlReturn_t (*temperature)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
    nvmlReturn_t (*clock)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
    nvmlReturn_t (*throttle)(nvmlDevice_t, unsigned long long*) = nullptr;
    nvmlReturn_t (*ecc)(nvmlDevice_t, unsigned, unsigned, unsigned long long*) = nullptr;
    nvmlReturn_t (*retired_pending)(nvmlDevice_t, unsigned*) = nullptr;
    nvmlReturn_t (*remapped_rows)(nvmlDevice_t, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
    nvmlReturn_t (*event_set_create)(nvmlEventSet_t*) = nullptr;
    nvmlReturn_t (*supported_events)(nvmlDevice_t, unsigned long long*) = nullptr;
    nvmlReturn_t (*register_events)(nvmlDevice_t, unsigned long long, nvmlEventSet_t) = nullptr;
    nvmlReturn_t (*event_wait)(nvmlEventSet_t, nvmlEventData_t*, unsigned) = nullptr;
    nvmlReturn_t (*event_set_free)(nvmlEventSet_t) = nullptr;
    nvmlReturn_t (*gpm_support)(nvmlDevice_t, nvmlGpmSupport_t*) = nullptr;
    nvmlReturn_t (*gpm_alloc)(nvmlGpmSample_t*) = nullptr;
    nvmlReturn_t (*gpm_free)(nvmlGpmSample_t) = nullptr;
    nvmlReturn_t (*gpm_get)(nvmlDevice_t, nvmlGpmSample_t) = nullptr;
    nvmlReturn_t (*gpm_metrics)(nvmlGpmMetricsGet_t*) = nullptr;
    nvmlReturn_t (*compute_processes)(nvmlDevice_t, unsigned*, nvmlProcessInfo_t*) = nullptr;
};

namespace {

template <typename Fn>
void bind(void* handle, Fn& fn, const char* name, const char* fallback = nullptr) {
    void* sym = dlsym(handle, name);
    if (!sym && fallback) sym = dlsym(handle, fallback);
    fn = reinterpret_cast<Fn>(sym);
}

}  // namespace

std::unique_ptr<Library> Library::open(const std::string& path, std::string& error) {
    std::unique_ptr<Library> lib(new Library());
    lib->api_ = std::make_unique<Api>();
    // RTLD_LOCAL: NVML's symbols must not leak into the process's global namespace.
    lib->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib->handle_) {
        const char* why = dlerror();
        error = fmt::format("nvml: cannot load {}: {}", path, why ? why : "unknown error");
        return nullptr;
    }
    auto& a = *lib->api_;
    void* h = lib->handle_;
    bind(h, a.init, "nvmlInitWithFlags");
    bind(h, a.init_v2, "nvmlInit_v2", "nvmlInit");
    bind(h, a.shutdown, "nvmlShutdown");
    bind(h, a.count, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
    bind(h, a.by_index, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
    bind(h, a.minor, "nvmlDeviceGetMinorNumber");
    bind(h, a.error_string, "nvmlErrorString");
    if ((!a.init && !a.init_v2) || !a.shutdown || !a.count || !a.by_index || !a.minor || !a.error_string) {
        error = fmt::format("nvml: {} lacks a required NVML function (init, count, handle, minor number)", path);
        return nullptr;  // the destructor dlcloses
    }
    bind(h, a.name, "nvmlDeviceGetName");
    bind(h, a.uuid, "nvmlDeviceGetUUID");
    bind(h, a.utilization, "nvmlDeviceGetUtilizationRates");
    bind(h, a.memory, "nvmlDeviceGetMemoryInfo");
    bind(h, a.power, "nvmlDeviceGetPowerUsage");
    bind(h, a.energy, "nvmlDeviceGetTotalEnergyConsumption");
    bind(h, a.temperature, "nvmlDeviceGetTemperature");
    bind(h, a.clock, "nvmlDeviceGetClockInfo");
    bind(h, a.throttle, "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons");
    bind(h, a.ecc, "nvmlDeviceGetTotalEccErrors");
    bind(h, a.retired_pending, "nvmlDeviceGetRetiredPagesPendingStatus");
    bind(h, a.remapped_rows, "nvmlDeviceGetRemappedRows");
    bind(h, a.event_set_create, "nvmlEventSetCreate");
    bind(h, a.supported_events, "nvmlDeviceGetSupportedEventTypes");
    bind(h, a.register_events, "nvmlDeviceRegisterEvents");
    bind(h, a.event_wait, "nvmlEventSetWait_v2", "nvmlEventSetWait");
    bind(h, a.event_set_free, "nvmlEventSetFree");
    bind(h, a.gpm_support, "nvmlGpmQueryDeviceSupport");
    bind(h, a.gpm_alloc, "nvmlGpmSampleAlloc");
    bind(h, a.gpm_free, "nvmlGpmSampleFree");
    bind(h, a.gpm_get, "nvmlGpmSampleGet");
    bind(h, a.gpm_metrics, "nvmlGpmMetricsGet");
    // _v2 and _v3 share the element layout; the unversioned call's is shorter, so not bound.
    bind(h, a.compute_processes, "nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2");

    // NO_GPUS: initialise even where the driver sees no GPU, so the caller can say so itself.
    const nvmlReturn_t rc = a.init ? a.init(kInitFlagNoGpus) : a.init_v2();
    if (rc != NVML_SUCCESS) {
        error = fmt::format("nvml: init failed: {}", lib->error_string(rc));
        return nullptr;
    }
    lib->live_ = true;
    return lib;
}

Library::~Library() {
    if (api_) {
        for (auto sample : gpm_previous_)
            if (sample && api_->gpm_free) api_->gpm_free(sample);
        if (events_ && api_->event_set_free) api_->event_set_free(events_);
        if (live_ && api_->shutdown) api_->shutdown();
    }
    if (handle_) dlclose(handle_);
}

bool Library::reinit(std::string& error) {
    if (events_ || !watched_.empty()) {
        error = "nvml: cannot initialise again while devices are tracked";
        return false;
    }
    if (live_) api_->shutdown();
    live_ = false;
    const nvmlReturn_t rc = api_->init ? api_->init(kInitFlagNoGpus) : api_->init_v2();
    if (rc != NVML_SUCCESS) {
        error = fmt::format("nvml: init failed: {}", error_string(rc));
        return false;
    }
    live_ = true;
    return true;
}

void Library::shutdown() {
    if (live_ && !events_ && watched_.empty()) api_->shutdown();
    if (!events_ && watched_.empty()) live_ = false;
}

std::string Library::error_string(nvmlReturn_t rc) const {
    const char* text = api_ && api_->error_string ? api_->error_string(rc) : nullptr;
    return text ? fmt::format("{} ({})", text, rc) : fmt::format("NVML error {}", rc);
}

std::vector<Library::Device> Library::devices(std::string& error) const {
    std::vector<Device> out;
    unsigned count = 0;
    if (const auto rc = api_->count(&count); rc != NVML_SUCCESS) {
        error = fmt::format("nvml: device count: {}", error_string(rc));
        return out;
    }
    for (unsigned i = 0; i < count && i < 1024; ++i) {
        nvmlDevice_t dev = nullptr;
        unsigned minor = 0;
        if (api_->by_index(i, &dev) != NVML_SUCCESS || api_->minor(dev, &minor) != NVML_SUCCESS) continue;
        Device d{static_cast<int>(minor), dev, {}, {}};
        char buf[96] = {};
        if (api_->name && api_->name(dev, buf, sizeof buf) == NVML_SUCCESS) d.name.assign(buf, strnlen(buf, sizeof buf));
        char ubuf[96] = {};
        if (api_->uuid && api_->uuid(dev, ubuf, sizeof ubuf) == NVML_SUCCESS) d.uuid.assign(ubuf, strnlen(ubuf, sizeof ubuf));
        out.push_back(std::move(d));
    }
    return out;
}

Reading Library::read(nvmlDevice_t dev) const {
    Reading r;
    const auto& a = *api_;
    auto note = [&r](nvmlReturn_t rc) {
        if (rc == NVML_ERROR_GPU_IS_LOST) r.lost = true;
        return rc == NVML_SUCCESS;
    };
    if (nvmlUtilization_t u{}; a.utilization && note(a.utilization(dev, &u))) {
        r.util_gpu = u.gpu;
        r.util_mem = u.memory;
    }
    if (nvmlMemory_t m{}; a.memory && note(a.memory(dev, &m))) {
        r.mem_used = static_cast<long long>(m.used);
        r.mem_total = static_cast<long long>(m.total);
    }
    if (unsigned v = 0; a.power && note(a.power(dev, &v))) r.power_mw = v;
    if (unsigned long long v = 0; a.energy && note(a.energy(dev, &v))) r.energy_mj = static_cast<long long>(v);
    if (unsigned v = 0; a.temperature && note(a.temperature(dev, kTemperatureGpu, &v))) r.temp_c = v;
    if (unsigned v = 0; a.clock && note(a.clock(dev, kClockSm, &v))) r.sm_clock_mhz = v;
    if (unsigned long long v = 0; a.throttle && note(a.throttle(dev, &v))) r.throttle_reasons = static_cast<long long>(v);
    if (unsigned long long v = 0; a.ecc && note(a.ecc(dev, kEccCorrected, kEccVolatile, &v))) r.ecc_corrected = static_cast<long long>(v);
    if (unsigned long long v = 0; a.ecc && note(a.ecc(dev, kEccUncorrected, kEccVolatile, &v))) r.ecc_uncorrected = static_cast<long long>(v);
    if (unsigned v = 0; a.retired_pending && note(a.retired_pending(dev, &v))) r.retired_pending = v;
    if (unsigned c = 0, u = 0, p = 0, f = 0; a.remapped_rows && note(a.remapped_rows(dev, &c, &u, &p, &f))) {
        r.remap_pending = p;
        r.remap_failure = f;
    }
    // GPM: metrics are the difference of two samples, so keep the previous one per device.
    if (a.gpm_support && a.gpm_alloc && a.gpm_get && a.gpm_metrics && a.gpm_free) {
        nvmlGpmSupport_t support{kGpmSupportVersion, 0};
        if (a.gpm_support(dev, &support) == NVML_SUCCESS && support.isSupportedDevice) {
            std::size_t slot = 0;
            while (slot < watched_.size() && watched_[slot].handle != dev) ++slot;
            if (slot < watched_.size()) {
                nvmlGpmSample_t now = nullptr;
                if (a.gpm_alloc(&now) == NVML_SUCCESS && a.gpm_get(dev, now) == NVML_SUCCESS) {
                    if (gpm_previous_[slot]) {
                        nvmlGpmMetricsGet_t m{};
                        m.version = kGpmMetricsGetVersion;
                        m.numMetrics = ACME_GPM_METRICS;
                        m.sample1 = gpm_previous_[slot];
                        m.sample2 = now;
                        m.metrics[0].metricId = kGpmSmUtil;
                        m.metrics[1].metricId = kGpmAnyTensorUtil;
                        m.metrics[2].metricId = kGpmDramBwUtil;
                        if (a.gpm_metrics(&m) == NVML_SUCCESS) {
                            if (m.metrics[0].nvmlReturn == NVML_SUCCESS) r.gpm_sm_util = m.metrics[0].value;
                            if (m.metrics[1].nvmlReturn == NVML_SUCCESS) r.gpm_tensor_util = m.metrics[1].value;
                            if (m.metrics[2].nvmlReturn == NVML_SUCCESS) r.gpm_dram_bw_util = m.metrics[2].value;
                        }
                        a.gpm_free(gpm_previous_[slot]);
                    }
                    gpm_previous_[slot] = now;
                } else if (now) {
                    a.gpm_free(now);
                }
            }
        }
    }
    return r;
}

void Library::track(std::vector<Device> devices) {
    for (auto sample : gpm_previous_)
        if (sample && api_->gpm_free) api_->gpm_free(sample);
    gpm_previous_.assign(devices.size(), nullptr);
    watched_ = std::move(devices);
}

bool Library::watch_events(std::string& error) {
    const auto& devices = watched_;
    const auto& a = *api_;
    if (!a.event_set_create || !a.register_events || !a.event_wait || !a.event_set_free) {
        error = "nvml: this driver has no event API; XIDs will not be recorded";
        return false;
    }
    if (const auto rc = a.event_set_create(&events_); rc != NVML_SUCCESS) {
        error = fmt::format("nvml: event set: {}", error_string(rc));
        events_ = nullptr;
        return false;
    }
    bool any = false;
    for (const auto& d : devices) {
        unsigned long long supported = kEventXid | kEventSbe | kEventDbe;
        if (a.supported_events) a.supported_events(d.handle, &supported);
        const unsigned long long mask = supported & (kEventXid | kEventSbe | kEventDbe);
        if (mask && a.register_events(d.handle, mask, events_) == NVML_SUCCESS) any = true;
    }
    if (!any) error = "nvml: no GPU accepted event registration; XIDs will not be recorded";
    return any;
}

std::optional<Event> Library::wait_event(unsigned timeout_ms) {
    if (!events_) return std::nullopt;
    nvmlEventData_t data{};
    if (api_->event_wait(events_, &data, timeout_ms) != NVML_SUCCESS) return std::nullopt;
    Event e;
    e.type = data.eventType;
    e.data = data.eventData;
    for (const auto& d : watched_)
        if (d.handle == data.device) e.minor = d.minor;
    return e;
}

std::optional<std::vector<unsigned>> Library::processes(nvmlDevice_t device) const {
    if (!api_->compute_processes) return std::nullopt;
    // The list can grow between the size query and the read: a few tries with room to spare.
    std::vector<nvmlProcessInfo_t> infos(8);
    for (int attempt = 0; attempt < 4; ++attempt) {
        unsigned count = static_cast<unsigned>(infos.size());
        const nvmlReturn_t rc = api_->compute_processes(device, &count, infos.data());
        if (rc == NVML_SUCCESS) {
            std::vector<unsigned> pids;
            for (unsigned i = 0; i < count && i < infos.size(); ++i) pids.push_back(infos[i].pid);
            return pids;
        }
        if (rc != NVML_ERROR_INSUFFICIENT_SIZE || count > 65536) return std::nullopt;
        infos.resize(count + 8);
    }
    return std::nullopt;
}

}  // namespace acme::nvml
