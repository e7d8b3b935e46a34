#include "common/slurm/job_type.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace acme::acct {
namespace {

constexpr std::array<std::string_view, 6> kTypes = {"pretrain", "sft", "eval", "debug", "mllm", "other"};

std::string lower(std::string_view s) {
    std::string out(s.substr(0, 256));
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
}

// Whole-word match: "eval" in "llama-eval-7b" but not in "medieval".
bool has_word(const std::string& text, std::string_view word) {
    for (std::size_t pos = text.find(word); pos != std::string::npos; pos = text.find(word, pos + 1)) {
        const bool left = pos == 0 || !std::isalpha(static_cast<unsigned char>(text[pos - 1]));
        const std::size_t end = pos + word.size();
        const bool right = end >= text.size() || !std::isalpha(static_cast<unsigned char>(text[end]));
        if (left && right) return true;
    }
    return false;
}

}  // namespace

std::span<const std::string_view> job_types() { return kTypes; }

std::optional<std::string_view> parse_job_type(std::string_view text) {
    const std::string l = lower(text);
    for (auto t : kTypes)
        if (l == t) return t;
    return std::nullopt;
}

JobType classify_job_type(const JobTypeInputs& in) {
    if (auto t = parse_job_type(in.tag)) return {*t, "tag"};
    const std::string comment = lower(in.comment);
    constexpr std::string_view key = "llm-job-type=";
    if (const auto pos = comment.find(key); pos != std::string::npos) {
        auto value = std::string_view(comment).substr(pos + key.size());
        value = value.substr(0, value.find_first_of(" ,;"));
        if (auto t = parse_job_type(value)) return {*t, "comment"};
    }
    if (comment.rfind("evalsched", 0) == 0) return {"eval", "evalsched"};
    const std::string name = lower(in.name);
    // Order matters: "mllm-sft" is mllm work, "sft-eval" an evaluation.
    struct Hint {
        std::string_view word;
        std::string_view type;
    };
    constexpr std::array<Hint, 16> hints = {{
        {"eval", "eval"}, {"evaluate", "eval"}, {"evaluation", "eval"}, {"bench", "eval"}, {"benchmark", "eval"},
        {"mllm", "mllm"}, {"vlm", "mllm"}, {"multimodal", "mllm"},
        {"sft", "sft"}, {"finetune", "sft"}, {"rlhf", "sft"}, {"dpo", "sft"},
        {"pretrain", "pretrain"}, {"pt", "pretrain"},
        {"debug", "debug"}, {"test", "debug"},
    }};
    for (const auto& h : hints)
        if (has_word(name, h.word)) return {h.type, "name"};
    if (name == "interactive" || name == "bash" || name == "sh") return {"debug", "name"};
    return {"other", "default"};
}

}  // namespace acme::acct
