// The subset of NVML that acme-slurm uses, declared here because Debian ships no nvml.h
// (it is non-free). Layouts and values follow NVIDIA's nvml.h (API 12/13). Only what the
// sampler and the health gate call is declared; add to it, never guess a layout.
#pragma once

#include <cstdint>

extern "C" {

typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlEventSet_st* nvmlEventSet_t;
typedef int nvmlReturn_t;

enum : nvmlReturn_t {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_LIBRARY_NOT_FOUND = 12,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_UNKNOWN = 999,
};

typedef struct {
    unsigned int gpu;     // percent of the last sample period the GPU was busy
    unsigned int memory;  // percent of that period device memory was read or written
} nvmlUtilization_t;

typedef struct {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;

typedef struct {
    nvmlDevice_t device;
    unsigned long long eventType;
    unsigned long long eventData;  // the XID number for XidCriticalError
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlEventData_t;

// GPM (Hopper and newer).
// nvmlDeviceGetComputeRunningProcesses_v2/_v3's element (nvml.h's nvmlProcessInfo_v2_t; _v3
// takes the same layout): the pid is what the sampler matches to the job.
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_t;

typedef struct nvmlGpmSample_st* nvmlGpmSample_t;

typedef struct {
    unsigned int version;  // NVML_GPM_SUPPORT_VERSION
    unsigned int isSupportedDevice;
} nvmlGpmSupport_t;

typedef struct {
    char* shortName;
    char* longName;
    char* unit;
} nvmlGpmMetricInfo_t;

typedef struct {
    unsigned int metricId;
    nvmlReturn_t nvmlReturn;
    double value;
    nvmlGpmMetricInfo_t metricInfo;
} nvmlGpmMetric_t;

// nvml.h sizes metrics[] by NVML_GPM_METRIC_MAX, which grew across drivers while the struct
// version stayed 1; the driver reads only numMetrics entries, so a small array is safe.
enum { ACME_GPM_METRICS = 3 };
typedef struct {
    unsigned int version;  // NVML_GPM_METRICS_GET_VERSION
    unsigned int numMetrics;
    nvmlGpmSample_t sample1;
    nvmlGpmSample_t sample2;
    nvmlGpmMetric_t metrics[ACME_GPM_METRICS];
} nvmlGpmMetricsGet_t;

}  // extern "C"

namespace acme::nvml {

inline constexpr unsigned kInitFlagNoGpus = 1;        // NVML_INIT_FLAG_NO_GPUS
inline constexpr unsigned kTemperatureGpu = 0;        // NVML_TEMPERATURE_GPU
inline constexpr unsigned kClockSm = 1;               // NVML_CLOCK_SM
inline constexpr unsigned kEccCorrected = 0;          // NVML_MEMORY_ERROR_TYPE_CORRECTED
inline constexpr unsigned kEccUncorrected = 1;        // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
inline constexpr unsigned kEccVolatile = 0;           // NVML_VOLATILE_ECC
inline constexpr unsigned long long kEventXid = 0x8;  // nvmlEventTypeXidCriticalError
inline constexpr unsigned long long kEventSbe = 0x1;  // nvmlEventTypeSingleBitEccError
inline constexpr unsigned long long kEventDbe = 0x2;  // nvmlEventTypeDoubleBitEccError
inline constexpr unsigned kGpmSupportVersion = 1;
inline constexpr unsigned kGpmMetricsGetVersion = 1;
inline constexpr unsigned kGpmSmUtil = 2;
inline constexpr unsigned kGpmAnyTensorUtil = 5;
inline constexpr unsigned kGpmDramBwUtil = 10;

}  // namespace acme::nvml
