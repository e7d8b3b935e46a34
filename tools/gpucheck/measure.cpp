#include "tools/gpucheck/measure.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <chrono>

#include <fmt/format.h>

namespace acme::gpucheck {
namespace {

#define CUDA_OR_FAIL(call)                                                             \
    do {                                                                               \
        const cudaError_t rc_ = (call);                                                \
        if (rc_ != cudaSuccess) {                                                      \
            error = fmt::format("{}: {}", #call, cudaGetErrorString(rc_));             \
            return std::nullopt;                                                       \
        }                                                                              \
    } while (0)

#define NCCL_OR_FAIL(call)                                                             \
    do {                                                                               \
        const ncclResult_t rc_ = (call);                                               \
        if (rc_ != ncclSuccess) {                                                      \
            error = fmt::format("{}: {}", #call, ncclGetErrorString(rc_));             \
            return std::nullopt;                                                       \
        }                                                                              \
    } while (0)

// Device buffers released on every path.
struct DeviceBuffer {
    void* p = nullptr;
    ~DeviceBuffer() {
        if (p) cudaFree(p);
    }
};

struct Timer {
    cudaEvent_t start{}, stop{};
    Timer() {
        cudaEventCreate(&start);
        cudaEventCreate(&stop);
    }
    ~Timer() {
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
    }
    double seconds() {
        float ms = 0;
        cudaEventSynchronize(stop);
        cudaEventElapsedTime(&ms, start, stop);
        return ms / 1000.0;
    }
};

// Bus bandwidth of an all-reduce (NCCL's nccl-tests convention): algbw * 2(n-1)/n.
double busbw(long long bytes, double seconds_per_op, int ranks) {
    const double algbw = static_cast<double>(bytes) / seconds_per_op / 1e9;
    return ranks > 1 ? algbw * 2.0 * (ranks - 1) / ranks : algbw;
}

}  // namespace

std::optional<double> gemm_tflops(int dev, int n, int iterations, std::string& error) {
    CUDA_OR_FAIL(cudaSetDevice(dev));
    const std::size_t elems = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
    DeviceBuffer a, b, c;
    CUDA_OR_FAIL(cudaMalloc(&a.p, elems * 2));
    CUDA_OR_FAIL(cudaMalloc(&b.p, elems * 2));
    CUDA_OR_FAIL(cudaMalloc(&c.p, elems * 2));
    CUDA_OR_FAIL(cudaMemset(a.p, 0, elems * 2));
    CUDA_OR_FAIL(cudaMemset(b.p, 0, elems * 2));
    cublasHandle_t handle = nullptr;
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
        error = "cublasCreate failed";
        return std::nullopt;
    }
    const float alpha = 1.0f, beta = 0.0f;
    auto gemm = [&] {
        return cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a.p, CUDA_R_16BF, n, b.p, CUDA_R_16BF, n,
                            &beta, c.p, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    };
    if (gemm() != CUBLAS_STATUS_SUCCESS) {  // warm-up, and picks the algorithm
        cublasDestroy(handle);
        error = "cublasGemmEx (BF16) failed";
        return std::nullopt;
    }
    Timer t;
    cudaEventRecord(t.start);
    for (int i = 0; i < iterations; ++i) gemm();
    cudaEventRecord(t.stop);
    const double s = t.seconds();
    cublasDestroy(handle);
    CUDA_OR_FAIL(cudaGetLastError());
    return 2.0 * n * static_cast<double>(n) * n * iterations / s / 1e12;
}

std::optional<double> copy_gbps(int dev, long long bytes, int iterations, std::string& error) {
    CUDA_OR_FAIL(cudaSetDevice(dev));
    DeviceBuffer src, dst;
    CUDA_OR_FAIL(cudaMalloc(&src.p, static_cast<std::size_t>(bytes)));
    CUDA_OR_FAIL(cudaMalloc(&dst.p, static_cast<std::size_t>(bytes)));
    CUDA_OR_FAIL(cudaMemcpy(dst.p, src.p, static_cast<std::size_t>(bytes), cudaMemcpyDeviceToDevice));
    Timer t;
    cudaEventRecord(t.start);
    for (int i = 0; i < iterations; ++i) cudaMemcpyAsync(dst.p, src.p, static_cast<std::size_t>(bytes), cudaMemcpyDeviceToDevice);
    cudaEventRecord(t.stop);
    const double s = t.seconds();
    CUDA_OR_FAIL(cudaGetLastError());
    return 2.0 * static_cast<double>(bytes) * iterations / s / 1e9;  // read + write
}

std::optional<double> allreduce_busbw_local(const std::vector<int>& devs, long long bytes, int iterations,
                                            std::string& error) {
    const int n = static_cast<int>(devs.size());
    std::vector<ncclComm_t> comms(devs.size());
    NCCL_OR_FAIL(ncclCommInitAll(comms.data(), n, devs.data()));
    std::vector<DeviceBuffer> bufs(devs.size());
    std::vector<cudaStream_t> streams(devs.size());
    const std::size_t count = static_cast<std::size_t>(bytes) / sizeof(float);
    auto cleanup = [&] {
        for (std::size_t i = 0; i < devs.size(); ++i) {
            cudaSetDevice(devs[i]);
            if (streams[i]) cudaStreamDestroy(streams[i]);
            ncclCommDestroy(comms[i]);
        }
    };
    for (std::size_t i = 0; i < devs.size(); ++i) {
        cudaSetDevice(devs[i]);
        if (cudaMalloc(&bufs[i].p, count * sizeof(float)) != cudaSuccess || cudaStreamCreate(&streams[i]) != cudaSuccess) {
            cleanup();
            error = "cannot allocate all-reduce buffers";
            return std::nullopt;
        }
    }
    auto round = [&] {
        ncclGroupStart();
        for (std::size_t i = 0; i < devs.size(); ++i)
            ncclAllReduce(bufs[i].p, bufs[i].p, count, ncclFloat, ncclSum, comms[i], streams[i]);
        ncclGroupEnd();
        for (std::size_t i = 0; i < devs.size(); ++i) {
            cudaSetDevice(devs[i]);
            cudaStreamSynchronize(streams[i]);
        }
    };
    round();  // warm-up: connections are set up lazily
    const auto start = std::chrono::steady_clock::now();
    for (int it = 0; it < iterations; ++it) round();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    cleanup();
    return busbw(bytes, s / iterations, n);
}

std::optional<double> allreduce_busbw(ncclComm_t comm, int ranks, int dev, long long bytes, int iterations,
                                      std::string& error) {
    CUDA_OR_FAIL(cudaSetDevice(dev));
    const std::size_t count = static_cast<std::size_t>(bytes) / sizeof(float);
    DeviceBuffer buf;
    CUDA_OR_FAIL(cudaMalloc(&buf.p, count * sizeof(float)));
    cudaStream_t stream{};
    CUDA_OR_FAIL(cudaStreamCreate(&stream));
    NCCL_OR_FAIL(ncclAllReduce(buf.p, buf.p, count, ncclFloat, ncclSum, comm, stream));
    CUDA_OR_FAIL(cudaStreamSynchronize(stream));
    const auto start = std::chrono::steady_clock::now();
    for (int it = 0; it < iterations; ++it) ncclAllReduce(buf.p, buf.p, count, ncclFloat, ncclSum, comm, stream);
    CUDA_OR_FAIL(cudaStreamSynchronize(stream));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    cudaStreamDestroy(stream);
    return busbw(bytes, s / iterations, ranks);
}

}  // namespace acme::gpucheck
