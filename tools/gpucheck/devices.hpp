// Slurm's GPU ids are device minor numbers (/dev/nvidiaN). CUDA numbers devices its own way
// (fastest first, or PCI order), so the mapping goes through the driver's own table:
// /proc/driver/nvidia/gpus/<bus>/information gives each GPU's minor and bus location, and
// cudaDeviceGetByPCIBusId turns the bus location into a CUDA device.
#pragma once

#include <string>
#include <vector>

namespace acme::gpucheck {

struct Device {
    int id = -1;        // minor number (Slurm's GPU id); -1 when the driver table is unreadable
    int cuda = -1;      // CUDA device ordinal
    std::string name;
    std::string bus;
};

// All CUDA devices (ids from the driver table where readable), or only those in `ids`.
// Sets error when there is no usable GPU.
std::vector<Device> find_devices(const std::vector<int>& ids, std::string& error);

}  // namespace acme::gpucheck
