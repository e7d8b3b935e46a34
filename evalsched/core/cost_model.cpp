#include "evalsched/core/cost_model.hpp"

#include <algorithm>
#include <cmath>

namespace acme::evalsched {

std::string_view to_string(TaskKind kind) {
    switch (kind) {
        case TaskKind::generation: return "generation";
        case TaskKind::multiple_choice: return "multiple_choice";
        case TaskKind::code_execution: return "code_execution";
        case TaskKind::judge: return "judge";
    }
    return "generation";
}

std::optional<TaskKind> task_kind_from(std::string_view text) {
    if (text == "generation") return TaskKind::generation;
    if (text == "multiple_choice") return TaskKind::multiple_choice;
    if (text == "code_execution") return TaskKind::code_execution;
    if (text == "judge") return TaskKind::judge;
    return std::nullopt;
}

std::string size_class(double params_b) {
    // Boundaries sit between the sizes teams actually train, so 6.7B and 7B share a class.
    if (params_b <= 2) return "1b";
    if (params_b <= 4.5) return "3b";
    if (params_b <= 10) return "7b";
    if (params_b <= 20) return "13b";
    if (params_b <= 45) return "34b";
    if (params_b <= 90) return "70b";
    return "100b+";
}

double CostModel::per_sample_s(TaskKind kind) const {
    switch (kind) {
        case TaskKind::multiple_choice: return 0.06;  // a few loglikelihood passes, no decoding
        case TaskKind::generation: return 0.45;       // a few hundred decoded tokens, batched
        case TaskKind::code_execution: return 0.9;    // long completions, often n>1 samples
        case TaskKind::judge: return 1.6;             // long free-form answers for a judge
    }
    return 0.45;
}

double CostModel::metric_per_sample_s(TaskKind kind) const {
    switch (kind) {
        case TaskKind::multiple_choice: return 0.0005;
        case TaskKind::generation: return 0.004;      // answer extraction, exact match / F1
        case TaskKind::code_execution: return 0.25;   // sandboxed unit tests (paper: 42 s for HumanEval)
        case TaskKind::judge: return 0.25;            // ~2 s per judge API call, 8 calls in flight
    }
    return 0.004;
}

double CostModel::run_seconds(TaskKind kind, double samples, double params_b, int gpus) const {
    const double g = std::max(1, gpus);
    const double efficiency = g > 1 ? multi_gpu_efficiency : 1.0;
    // Decoder compute grows about linearly with parameters at a fixed batch.
    return samples * per_sample_s(kind) * (std::max(params_b, 0.1) / 7.0) / (g * efficiency);
}

double CostModel::metric_seconds(TaskKind kind, double samples) const {
    return metric_fixed_s + samples * metric_per_sample_s(kind);
}

double CostModel::trial_startup_seconds(double checkpoint_bytes) const {
    return framework_init_s + checkpoint_bytes / pcie_bytes_per_s;
}

double CostModel::preprocess_seconds(double samples) const {
    return preprocess_fixed_s + samples * preprocess_per_sample_s;
}

}  // namespace acme::evalsched
