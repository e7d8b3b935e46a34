// A fake libnvidia-ml.so.1: the one test double in acme-slurm. It exports the NVML symbols the
// sampler dlopens, and serves what a scenario file scripts: GPUs (in NVML enumeration order,
// each with its minor number), per-second time series of each metric, XIDs injected at a time
// on a GPU, and failure modes (init fails, a call hangs, the GPU falls off the bus).
//
// Scenario lookup: $ACME_FAKE_NVML_SCENARIO; else scenarios/<SLURMD_NODENAME>.toml, then
// scenarios/default.toml, next to this library; else four idle GPUs with minors 0..3.
// Time t is seconds since nvmlInit in the calling process; a series holds its last value.
#include <dlfcn.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <toml++/toml.h>

#include "common/nvml/nvml_api.hpp"

namespace {

struct FakeGpu {
    int minor = 0;
    std::string name = "Fake GPU";
    std::string uuid;
    unsigned long long memory_total = 80ULL << 30;
    std::vector<double> util, mem_util, mem_used, power_mw, temp_c;
    double sm_clock_mhz = 1980;
    double ecc_corrected = 0, ecc_uncorrected = 0, retired_pending = 0, remap_pending = 0, remap_failure = 0;
    double lost_at = -1;  // seconds; from then on calls return GPU_IS_LOST
    // processes = [pid, ...]: the compute processes NVML lists on the GPU ([]: none); absent:
    // the call answers NOT_SUPPORTED, as on a driver that cannot tell.
    std::optional<std::vector<unsigned>> processes;
    unsigned long long registered = 0;
};

struct FakeXid {
    double at = 0;
    int minor = 0;
    unsigned long long code = 0;
    bool delivered = false;
};

struct Scenario {
    std::vector<FakeGpu> gpus;
    std::vector<FakeXid> xids;
    std::string init = "ok";     // ok | fail | hang
    std::string sample = "ok";   // ok | hang: utilisation calls hang after hang_after seconds
    double hang_after = 0;
    bool events = true;
};

std::mutex mu;
Scenario scenario;
int init_count = 0;
std::chrono::steady_clock::time_point t0;
int event_set_token;

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double at_time(const std::vector<double>& series, double fallback) {
    if (series.empty()) return fallback;
    const auto i = static_cast<std::size_t>(now_s());
    return series[i < series.size() ? i : series.size() - 1];
}

std::vector<double> series(const toml::table& t, const char* key) {
    std::vector<double> out;
    if (const auto* arr = t[key].as_array()) {
        for (const auto& v : *arr)
            if (auto d = v.value<double>()) out.push_back(*d);
    } else if (auto d = t[key].value<double>()) {
        out.push_back(*d);
    }
    return out;
}

std::string library_dir() {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&library_dir), &info) && info.dli_fname)
        return std::filesystem::path(info.dli_fname).parent_path().string();
    return ".";
}

void load_scenario() {
    scenario = Scenario{};
    std::string path;
    if (const char* env = getenv("ACME_FAKE_NVML_SCENARIO"); env && *env) {
        path = env;
    } else {
        const std::string dir = library_dir() + "/scenarios/";
        const char* node = getenv("SLURMD_NODENAME");
        if (node && std::filesystem::exists(dir + node + ".toml"))
            path = dir + node + ".toml";
        else if (std::filesystem::exists(dir + "default.toml"))
            path = dir + "default.toml";
    }
    if (path.empty()) {
        for (int i = 0; i < 4; ++i) {
            FakeGpu g;
            g.minor = i;
            g.uuid = "GPU-fake-" + std::to_string(i);
            scenario.gpus.push_back(g);
        }
        return;
    }
    toml::table doc;
    try {
        doc = toml::parse_file(path);
    } catch (const toml::parse_error&) {
        scenario.init = "fail";  // a broken scenario looks like a broken driver
        return;
    }
    if (const auto* gpus = doc["gpu"].as_array()) {
        int index = 0;
        for (const auto& node : *gpus) {
            const auto* t = node.as_table();
            if (!t) continue;
            FakeGpu g;
            g.minor = (*t)["minor"].value_or(index);
            g.name = (*t)["name"].value_or(std::string("Fake GPU"));
            g.uuid = (*t)["uuid"].value_or("GPU-fake-" + std::to_string(g.minor));
            g.memory_total = (*t)["memory_total"].value_or(80LL << 30);
            g.util = series(*t, "util");
            g.mem_util = series(*t, "mem_util");
            g.mem_used = series(*t, "mem_used");
            g.power_mw = series(*t, "power_mw");
            g.temp_c = series(*t, "temp_c");
            g.sm_clock_mhz = (*t)["sm_clock_mhz"].value_or(1980.0);
            g.ecc_corrected = (*t)["ecc_corrected"].value_or(0.0);
            g.ecc_uncorrected = (*t)["ecc_uncorrected"].value_or(0.0);
            g.retired_pending = (*t)["retired_pending"].value_or(0.0);
            g.remap_pending = (*t)["remap_pending"].value_or(0.0);
            g.remap_failure = (*t)["remap_failure"].value_or(0.0);
            g.lost_at = (*t)["lost_at"].value_or(-1.0);
            if (const auto* procs = (*t)["processes"].as_array()) {
                g.processes.emplace();
                for (const auto& p : *procs)
                    if (auto pid = p.value<long long>()) g.processes->push_back(static_cast<unsigned>(*pid));
            }
            scenario.gpus.push_back(g);
            ++index;
        }
    }
    if (const auto* xids = doc["xid"].as_array()) {
        for (const auto& node : *xids) {
            const auto* t = node.as_table();
            if (!t) continue;
            FakeXid x;
            x.at = (*t)["at"].value_or(0.0);
            x.minor = (*t)["minor"].value_or(0);
            x.code = (*t)["code"].value_or(79LL);
            scenario.xids.push_back(x);
        }
    }
    scenario.init = doc["failure"]["init"].value_or(std::string("ok"));
    scenario.sample = doc["failure"]["sample"].value_or(std::string("ok"));
    scenario.hang_after = doc["failure"]["hang_after"].value_or(0.0);
    scenario.events = doc["failure"]["events"].value_or(true);
}

FakeGpu* gpu(nvmlDevice_t d) {
    auto* g = reinterpret_cast<FakeGpu*>(d);
    for (auto& candidate : scenario.gpus)
        if (&candidate == g) return g;
    return nullptr;
}

[[noreturn]] void hang() {
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

nvmlReturn_t check(nvmlDevice_t d, FakeGpu*& g) {
    if (init_count == 0) return NVML_ERROR_UNINITIALIZED;
    g = gpu(d);
    if (!g) return NVML_ERROR_INVALID_ARGUMENT;
    if (g->lost_at >= 0 && now_s() >= g->lost_at) return NVML_ERROR_GPU_IS_LOST;
    return NVML_SUCCESS;
}

// Energy in mJ: the integral of the power series over whole seconds since init.
unsigned long long energy(const FakeGpu& g) {
    const double t = now_s();
    double total = 0;
    for (int s = 0; s < static_cast<int>(t); ++s) {
        const auto i = static_cast<std::size_t>(s);
        total += g.power_mw.empty() ? 0 : g.power_mw[i < g.power_mw.size() ? i : g.power_mw.size() - 1];
    }
    total += (t - static_cast<int>(t)) * at_time(g.power_mw, 0);
    return static_cast<unsigned long long>(total);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) nvmlReturn_t nvmlInitWithFlags(unsigned) {
    std::lock_guard lock(mu);
    if (init_count++ == 0) {
        load_scenario();
        t0 = std::chrono::steady_clock::now();
    }
    if (scenario.init == "hang") hang();
    if (scenario.init == "fail") {
        --init_count;
        return NVML_ERROR_DRIVER_NOT_LOADED;
    }
    return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlInit_v2() { return nvmlInitWithFlags(0); }

__attribute__((visibility("default"))) nvmlReturn_t nvmlShutdown() {
    std::lock_guard lock(mu);
    if (init_count == 0) return NVML_ERROR_UNINITIALIZED;
    --init_count;
    return NVML_SUCCESS;
}

__attribute__((visibility("default"))) const char* nvmlErrorString(nvmlReturn_t rc) {
    switch (rc) {
        case NVML_SUCCESS: return "Success";
        case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
        case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
        case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
        case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
        case NVML_ERROR_TIMEOUT: return "Timeout";
        case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
        default: return "Unknown Error";
    }
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* count) {
    std::lock_guard lock(mu);
    if (init_count == 0) return NVML_ERROR_UNINITIALIZED;
    *count = static_cast<unsigned>(scenario.gpus.size());
    return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t* d) {
    std::lock_guard lock(mu);
    if (init_count == 0) return NVML_ERROR_UNINITIALIZED;
    if (i >= scenario.gpus.size()) return NVML_ERROR_INVALID_ARGUMENT;
    *d = reinterpret_cast<nvmlDevice_t>(&scenario.gpus[i]);
    return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned* minor) {
    std::lock_guard lock(mu);
    FakeGpu* g;
    if (auto rc = check(d, g)) return rc;
    *minor = static_cast<unsigned>(g->minor);
    return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* buf, unsigned len) {
    std::lock_guard lock(mu);
    FakeGpu* g;
    if (auto rc = check(d, g)) return rc;
    if (len == 0) return NVML_ERROR_INSUFFICIENT_SIZE;
    snprintf(buf, len, "%s", g->name.c_str());
    return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* buf, unsigned len) {
    std::lock_guard lock(mu);
    FakeGpu* g;
    if (auto rc = check(d, g)) return rc;
    if (len == 0) return NVML_ERROR_INSUFFICIENT_SIZE;
    snprintf(buf, len, "%s", g->uuid.c_str());
    return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned* count,
                                                                                           nvmlProcessInfo_t* infos) {
    std::lock_guard lock(mu);
    FakeGpu* g;
    if (auto rc = check(d, g)) return rc;
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    if (!g->processes) return NVML_ERROR_NOT_SUPPORTED;
    const auto n = static_cast<unsigned>(g->processes->size());
    if (*count < n || (n > 0 && !infos)) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    *count = n;
    for (unsigned i = 0; i < n; ++i) infos[i] = {(*g->processes)[i], 1ULL << 30, 0xFFFFFFFF, 0xFFFFFFFF};
    return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* u) {
    {
        std::lock_guard lock(mu);
        if (scenario.sample == "hang" && now_s() >= scenario.hang_after) {
            // fall through to hang outside the lock, like a wedged driver call
        } else {
            FakeGpu* g;
            if (auto rc = check(d, g)) return rc;
            u->gpu = static_cast<unsigned>(at_time(g->util, 0));
            u->memory = static_cast<unsigned>(at_time(g->mem_util, 0));
            return NVML_SUCCESS;
        }
    }
    hang();
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
    std::lock_guard lock(mu);
    FakeGpu* g;
    if (auto rc = check(d, g)) return rc;
    m->total = g->memory_total;
    m->used = static_cast<unsigned long long>(at_time(g->mem_used, 0));
    m->free = m->total > m->used ? m->total - m->used : 0;
    return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned* mw) {
    std::lock_guard lock(mu);
    FakeGpu* g;
    if (auto rc = check(d, g)) return rc;
    *mw = static_cast<unsigned>(at_time(g->power_mw, 0));
    return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long* mj) {
    std::lock_guard lock(mu);
    FakeGpu* g;
    if (auto rc = check(d, g)) return rc;
    *mj = energy(*g);
    return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, unsigned, unsigned* c) {
    std::lock_guard lock(mu);
    FakeGpu* g;
    if (auto rc = check(d, g)) return rc;
    *c = static_cast<unsigned>(at_time(g->temp_c, 30));
    return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, unsigned, unsigned* mhz) {
    std::lock_guard lock(mu);
    FakeGpu* g;
    if (auto rc = check(d, g)) return rc;
    *mhz = static_cast<unsigned>(g->sm_clock_mhz);
    return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long* r) {
    std::lock_guard lock(mu);
    FakeGpu* g;
    if (auto rc = check(d, g)) return rc;
    *r = at_time(g->util, 0) == 0 ? 0x1ULL : 0;  // GpuIdle while idle
    return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, unsigned type, unsigned, unsigned long long* n) {
    std::lock_guard lock(mu);
    FakeGpu* g;
    if (auto rc = check(d, g)) return rc;
    *n = static_cast<unsigned long long>(type == 0 ? g->ecc_corrected : g->ecc_uncorrected);
    return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, unsigned* p) {
    std::lock_guard lock(mu);
    FakeGpu* g;
    if (auto rc = check(d, g)) return rc;
    *p = static_cast<unsigned>(g->retired_pending);
    return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned* c, unsigned* u, unsigned* p, unsigned* f) {
    std::lock_guard lock(mu);
    FakeGpu* g;
    if (auto rc = check(d, g)) return rc;
    *c = 0;
    *u = 0;
    *p = static_cast<unsigned>(g->remap_pending);
    *f = static_cast<unsigned>(g->remap_failure);
    return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
    std::lock_guard lock(mu);
    if (init_count == 0) return NVML_ERROR_UNINITIALIZED;
    if (!scenario.events) return NVML_ERROR_NOT_SUPPORTED;
    *set = reinterpret_cast<nvmlEventSet_t>(&event_set_token);
    return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t d, unsigned long long* mask) {
    std::lock_guard lock(mu);
    FakeGpu* g;
    if (auto rc = check(d, g)) return rc;
    *mask = 0x8 | 0x1 | 0x2;
    return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long mask, nvmlEventSet_t) {
    std::lock_guard lock(mu);
    FakeGpu* g;
    if (auto rc = check(d, g)) return rc;
    g->registered |= mask;
    return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t, nvmlEventData_t* data, unsigned timeout_ms) {
    const double deadline = now_s() + timeout_ms / 1000.0;
    for (;;) {
        double next = deadline;
        {
            std::lock_guard lock(mu);
            const double t = now_s();
            for (auto& x : scenario.xids) {
                if (x.delivered) continue;
                if (x.at > t) {
                    next = std::min(next, x.at);
                    continue;
                }
                for (auto& g : scenario.gpus) {
                    // Like the driver: only events on registered devices are delivered.
                    if (g.minor != x.minor || !(g.registered & 0x8)) continue;
                    x.delivered = true;
                    *data = nvmlEventData_t{reinterpret_cast<nvmlDevice_t>(&g), 0x8, x.code, 0xffffffffu, 0xffffffffu};
                    return NVML_SUCCESS;
                }
            }
        }
        const double t = now_s();
        if (t >= deadline) return NVML_ERROR_TIMEOUT;
        // Block like the driver does (no polling), until the deadline or the next injected XID;
        // a signal ends the wait with TIMEOUT, as the driver's does (a sampler told to stop by
        // its epilog's SIGTERM stops at once, not after its wait).
        const double wait = std::max(0.0, next - t) + 0.0005;
        timespec ts{static_cast<time_t>(wait), static_cast<long>((wait - static_cast<double>(static_cast<time_t>(wait))) * 1e9)};
        if (::nanosleep(&ts, nullptr) != 0 && errno == EINTR) return NVML_ERROR_TIMEOUT;
    }
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t) { return NVML_SUCCESS; }

}  // extern "C"
