// The model's side of LLM-assisted diagnosis as data: the OpenAI-compatible chat request that
// asks for the taxonomy's JSON through a schema-constrained response (response_format
// json_schema, as vLLM, llama.cpp's server and Ollama accept), and the parser that accepts
// an answer only when it is the taxonomy's: a category and a reason that exist and agree, and
// an evidence line that occurs in the tail the model was shown. Pure (no network), so every
// branch is unit-tested and the parser is fuzzed (tests/fuzz/llm_answer_fuzz.cpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/diagnose/taxonomy.hpp"

namespace acme::diagnose {

// The JSON schema of one answer: {category, reason, confidence, evidence}, enums from the taxonomy.
nlohmann::json answer_schema();

// The POST /v1/chat/completions body for `model` about `tail` (already redacted).
std::string chat_request(std::string_view model, std::string_view tail, int max_tokens = 300);

struct ModelAnswer {
    const ReasonInfo* reason = nullptr;  // never null, never "unknown", in an accepted answer
    double confidence = 0;               // the model's own, clamped to [0, 1]
    std::size_t line = 0;                // 1-based line of `tail` holding the evidence (the last such)
    std::string evidence;                // the evidence as the model quoted it (trimmed)
};

// Shortest evidence accepted: "Error" alone occurs in any tail and proves nothing.
inline constexpr std::size_t kMinEvidenceChars = 8;

// Reads a chat completion body. nullopt with `error` (one phrase, no model text beyond 80
// characters) when it is not JSON, has no message content, the content is not the schema's
// object, the reason is not the taxonomy's or disagrees with the category, the model said
// unknown, or the evidence is not in `tail`. Never throws.
std::optional<ModelAnswer> parse_chat_answer(std::string_view body, std::string_view tail, std::string& error) noexcept;

}  // namespace acme::diagnose
