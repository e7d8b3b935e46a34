// What an evaluation costs when nothing has been measured yet: seconds per sample by task kind
// for a 7B model on one A100, scaled by model size and GPUs; CPU seconds for the metric; the
// fixed cost of starting a trial. Priors fall back to it; the simulator draws its ground truth
// around it. The constants are calibrated to the paper's HumanEval profile (Hu et al., NSDI'24,
// Fig. 13: over a minute of load + preprocessing, ~42 s of code execution on an idle GPU) and
// to common 7B timings with HF-transformers batching; measured priors replace them quickly.
#pragma once

#include <string>
#include <string_view>
#include <optional>

namespace acme::evalsched {

enum class TaskKind { generation, multiple_choice, code_execution, judge };

std::string_view to_string(TaskKind kind);
std::optional<TaskKind> task_kind_from(std::string_view text);

// The model being evaluated. checkpoint_bytes is what a trial reads (the weights, not the
// optimizer state a training checkpoint also holds).
struct ModelSpec {
    double params_b = 7;              // billions of parameters
    double checkpoint_bytes = 14e9;   // bf16 weights of a 7B model
};

// Priors are kept per size class, not per exact size: a 6.7B and a 7B run alike, and a new
// model size should inherit its neighbours' history rather than start from nothing.
std::string size_class(double params_b);

struct CostModel {
    // GPU seconds per sample, 7B on one GPU.
    double per_sample_s(TaskKind kind) const;
    // CPU seconds per sample of the metric job (code execution runs tests; judge calls an API).
    double metric_per_sample_s(TaskKind kind) const;

    // Inference seconds for `samples` on `gpus` GPUs (data parallel inside the trial).
    double run_seconds(TaskKind kind, double samples, double params_b, int gpus) const;
    // Metric job seconds, including its own process start.
    double metric_seconds(TaskKind kind, double samples) const;
    // Per trial, before the first sample: framework import, CUDA init, tokenizer, and the
    // weights copied from the node-local staged checkpoint over PCIe.
    double trial_startup_seconds(double checkpoint_bytes) const;
    // Per dataset inside a trial: reading and tokenizing it.
    double preprocess_seconds(double samples) const;

    double framework_init_s = 25;          // python imports, CUDA context, model build
    double pcie_bytes_per_s = 12e9;        // host memory -> GPU, effective
    double preprocess_fixed_s = 4;
    double preprocess_per_sample_s = 0.002;
    double metric_fixed_s = 15;            // the CPU job's own start
    double multi_gpu_efficiency = 0.9;     // padding and stragglers in data parallel
    // A dataset with no history, no suite prior and no sample count: assume it is long, so
    // its --time is generous and it is not packed into a window it may not fit.
    double unknown_dataset_s = 3600;
};

}  // namespace acme::evalsched
