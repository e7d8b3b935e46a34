#include "tools/gpucheck/devices.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>

namespace acme::gpucheck {
namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

// bus id (lower case, "0000:1b:00.0") -> minor
std::map<std::string, int> driver_minors() {
    std::map<std::string, int> out;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
        std::ifstream in(entry.path() / "information");
        std::string line;
        int minor = -1;
        std::string bus = entry.path().filename().string();
        while (std::getline(in, line)) {
            if (line.rfind("Device Minor:", 0) == 0) minor = std::atoi(line.c_str() + 13);
            if (line.rfind("Bus Location:", 0) == 0) {
                bus = line.substr(13);
                bus.erase(0, bus.find_first_not_of(" \t"));
            }
        }
        if (minor >= 0) out[lower(bus)] = minor;
    }
    return out;
}

}  // namespace

std::vector<Device> find_devices(const std::vector<int>& ids, std::string& error) {
    std::vector<Device> out;
    int count = 0;
    const cudaError_t rc = cudaGetDeviceCount(&count);
    if (rc != cudaSuccess || count == 0) {
        error = rc != cudaSuccess ? fmt::format("no GPU: {}", cudaGetErrorString(rc)) : std::string("no GPU visible");
        return out;
    }
    const auto minors = driver_minors();
    for (int d = 0; d < count; ++d) {
        Device dev;
        dev.cuda = d;
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, d) == cudaSuccess) dev.name = prop.name;
        char bus[32] = {};
        if (cudaDeviceGetPCIBusId(bus, sizeof bus, d) == cudaSuccess) dev.bus = lower(bus);
        // The driver writes 8-digit domains ("00000000:1b:00.0"), CUDA 4-digit ones.
        for (const auto& [b, minor] : minors)
            if (b == dev.bus || (b.size() > dev.bus.size() && b.ends_with(dev.bus.substr(dev.bus.find(':')))))
                dev.id = minor;
        if (dev.id < 0 && minors.empty()) dev.id = d;  // no driver table (containers): CUDA order
        if (ids.empty() || std::find(ids.begin(), ids.end(), dev.id) != ids.end()) out.push_back(dev);
    }
    if (out.empty()) error = "none of the requested GPUs is visible to CUDA";
    return out;
}

}  // namespace acme::gpucheck
