// Which of NVML's devices are a job's GPUs. The sampler (gputrace) and the health gate
// (faultguard) both ask, so the answer lives here, once.
#pragma once

#include <vector>

#include "common/nvml/library.hpp"

namespace acme::nvml {

struct Selection {
    std::vector<Library::Device> devices;  // the job's GPUs, in the order asked
    std::vector<int> missing;              // asked-for ids NVML does not show
};

// Picks the job's GPUs by minor number: Slurm's GPU ids (SLURM_JOB_GPUS) count the
// /dev/nvidiaN nodes that gres.conf File= names, and N is the minor number. NVML's own
// enumeration order (PCI bus order) can differ, so it is never used.
Selection select_devices(const std::vector<Library::Device>& all, const std::vector<int>& job_gpus);

}  // namespace acme::nvml
