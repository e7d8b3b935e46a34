#include "common/diagnose/taxonomy.hpp"

#include <array>

namespace acme::diagnose {
namespace {

using enum Category;
using enum Action;

// Hardware that stays broken after the job (a lost GPU, bad memory, a dead link, a node) is
// drained so the requeued job lands elsewhere; transient infrastructure trouble is requeued.
constexpr std::array kReasons = {
    ReasonInfo{"nvlink_error", infrastructure, drain, "NVLink (or XGMI) error between GPUs"},
    ReasonInfo{"cuda_error", infrastructure, requeue, "GPU/accelerator runtime or driver error (CUDA, HIP, ACL; device busy or missing)"},
    ReasonInfo{"ecc_error", infrastructure, drain, "uncorrectable GPU/accelerator memory (ECC, HBM, RAS) error"},
    ReasonInfo{"node_failure", infrastructure, drain, "node failed or hardware error on the host"},
    ReasonInfo{"network_error", infrastructure, requeue, "InfiniBand/Ethernet fabric error"},
    ReasonInfo{"connection_error", infrastructure, requeue, "connection to a service refused, reset or timed out"},
    ReasonInfo{"storage_error", infrastructure, requeue, "shared or object storage failed (S3, I/O error, quota, full)"},
    ReasonInfo{"nccl_timeout", infrastructure, requeue, "NCCL (or HCCL, RCCL) collective timed out (watchdog)"},
    ReasonInfo{"nccl_remote_error", infrastructure, requeue, "NCCL peer failed or went away"},
    ReasonInfo{"stalled_node", infrastructure, drain, "job stopped making progress; one node's GPUs diverged (a hang)"},
    ReasonInfo{"gpu_lost", infrastructure, drain, "GPU fell off the bus (XID 79)"},
    ReasonInfo{"xid_error", infrastructure, drain, "critical accelerator fault reported by the driver (NVIDIA XID, amdgpu, TPU/NPU chip)"},
    ReasonInfo{"out_of_memory", framework, fix_code, "GPU, accelerator or host memory exhausted"},
    ReasonInfo{"dataloader_killed", framework, fix_code, "DataLoader worker killed or crashed"},
    ReasonInfo{"runtime_error", framework, fix_code, "RuntimeError from the framework"},
    ReasonInfo{"assertion_error", framework, fix_code, "AssertionError"},
    ReasonInfo{"attribute_error", framework, fix_code, "AttributeError"},
    ReasonInfo{"value_error", framework, fix_code, "ValueError"},
    ReasonInfo{"zero_division", framework, fix_code, "ZeroDivisionError"},
    ReasonInfo{"model_loading_error", framework, fix_code, "model or checkpoint could not be loaded"},
    ReasonInfo{"dataset_loading_error", framework, fix_code, "dataset could not be loaded"},
    ReasonInfo{"cuda_version_mismatch", framework, fix_code, "the job's build does not match the driver, device or framework (CUDA/ROCm version, missing kernels, C++ ABI)"},
    ReasonInfo{"file_not_found", script, fix_code, "FileNotFoundError or missing file"},
    ReasonInfo{"os_error", script, fix_code, "OSError"},
    ReasonInfo{"type_error", script, fix_code, "TypeError"},
    ReasonInfo{"name_error", script, fix_code, "NameError"},
    ReasonInfo{"permission_error", script, fix_code, "permission denied"},
    ReasonInfo{"import_error", script, fix_code, "ImportError or ModuleNotFoundError"},
    ReasonInfo{"key_error", script, fix_code, "KeyError"},
    ReasonInfo{"syntax_error", script, fix_code, "SyntaxError in Python or the shell"},
    ReasonInfo{"argument_error", script, fix_code, "bad command-line arguments (argparse)"},
    ReasonInfo{"called_process_error", script, fix_code, "a subprocess failed (CalledProcessError)"},
    ReasonInfo{"index_error", script, fix_code, "IndexError"},
    ReasonInfo{"command_not_found", script, fix_code, "the shell could not find a command (exit 127)"},
    ReasonInfo{"time_limit", script, none, "the batch system killed the job at its time limit"},
    ReasonInfo{"cancelled", script, none, "the job was cancelled"},
    ReasonInfo{"stalled", unknown, none, "job stopped making progress; no node stood out"},
    ReasonInfo{"unknown", unknown, none, "nothing decided the cause"},
};

}  // namespace

std::span<const ReasonInfo> reasons() noexcept { return kReasons; }

const ReasonInfo* find_reason(std::string_view name) noexcept {
    for (const auto& reason : kReasons)
        if (reason.name == name) return &reason;
    return nullptr;
}

const ReasonInfo& unknown_reason() noexcept { return kReasons.back(); }

std::string_view to_string(Category category) noexcept {
    switch (category) {
        case infrastructure: return "infrastructure";
        case framework: return "framework";
        case script: return "script";
        case unknown: return "unknown";
    }
    return "unknown";
}

std::string_view to_string(Action action) noexcept {
    switch (action) {
        case requeue: return "requeue";
        case drain: return "drain";
        case fix_code: return "fix_code";
        case none: return "none";
    }
    return "none";
}

std::optional<Action> parse_action(std::string_view name) noexcept {
    for (Action action : {requeue, drain, fix_code, none})
        if (to_string(action) == name) return action;
    return std::nullopt;
}

}  // namespace acme::diagnose
