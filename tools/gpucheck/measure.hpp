// The measurements: BF16 GEMM throughput and device-memory copy bandwidth per GPU, NCCL
// all-reduce bus bandwidth across GPUs. Each returns nullopt and sets error when it cannot run.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nccl.h>

namespace acme::gpucheck {

std::optional<double> gemm_tflops(int cuda_device, int n, int iterations, std::string& error);
std::optional<double> copy_gbps(int cuda_device, long long bytes, int iterations, std::string& error);
// All GPUs of this process in one communicator (ncclCommInitAll).
std::optional<double> allreduce_busbw_local(const std::vector<int>& cuda_devices, long long bytes, int iterations,
                                            std::string& error);
// One GPU per process, over an existing communicator of `ranks` ranks (ncclCommInitRank).
std::optional<double> allreduce_busbw(ncclComm_t comm, int ranks, int cuda_device, long long bytes, int iterations,
                                      std::string& error);

}  // namespace acme::gpucheck
