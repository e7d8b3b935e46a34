// LLM-assisted diagnosis: where the rules answer unknown or below a confidence, ask the
// site's OpenAI-compatible model server (vLLM, llama.cpp, Ollama) about the redacted log tail,
// and turn an answer that passes llm_answer's checks into a Diagnosis marked as the model's:
// rule "llm:<model>", the evidence line with source "llm", and an "llm_model" entry naming
// the model. Off unless an endpoint is configured; one request, bounded by one deadline and an
// answer size cap. Runs in the helper processes (acme-faultguard-epilog, faultdiag), never in
// slurmstepd or slurmd.
//
// Policy (precision first for infrastructure): a model's answer is recorded and shown, never
// acted on. Recovery plans on the rules' answer (recovery_policy refuses a model's one), so
// configuring a model never drains a node or requeues a job that the rules would not have.
// An accepted answer becomes a rule only through `faultdiag --suggest-rule` and an admin.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "common/diagnose/engine.hpp"
#include "common/diagnose/redact.hpp"

namespace acme::diagnose {

struct LlmConfig {
    std::string endpoint;    // http://HOST[:PORT][/PREFIX]; POST PREFIX/v1/chat/completions. Empty: off
    std::string model;       // the server's model name
    std::string token_file;  // a root-only file holding the bearer token; empty: no Authorization
    double timeout = 8;      // seconds for the whole request (connect, send, answer)
    double below = 0.5;      // also ask when the rules' confidence is below this
    std::size_t tail_bytes = 24 * 1024;   // how much of the end of the log is sent
    std::size_t max_answer = 64 * 1024;   // a longer answer is refused
    bool enabled() const { return !endpoint.empty(); }
};

// One line naming what is wrong with the configuration; empty when it can be used (or is off).
std::string check_llm_config(const LlmConfig& config);

// The token: a regular file (not a symlink), owned by root or by the caller, unreadable by
// group and others, at most 4 KiB; its first line, trimmed. nullopt with `error` otherwise.
std::optional<std::string> read_token_file(const std::string& path, std::string& error);

// Ask when the rules did not decide: unknown, or a confidence below `below`.
bool wants_model(const Diagnosis& rules_answer, double below) noexcept;

// Is this diagnosis a model's answer? (Either the rule "llm:..." of a fresh one, or the
// "llm_model" evidence entry of one read back from a store.) The learned fallback is a model
// too: its rule is "fallback" and its first evidence entry's source "fallback". Recovery acts on
// neither.
bool from_model(const Diagnosis& d) noexcept;
// The learned fallback's answer (rule "fallback", or the "fallback" evidence of a stored one).
bool from_fallback(const Diagnosis& d) noexcept;
std::string model_name(const Diagnosis& d);

// The part of the log that is sent: its last `bytes`, from a line start; `first_line` is the
// 1-based number in `log` of the part's first line.
std::string_view log_tail_part(std::string_view log, std::size_t bytes, std::size_t& first_line) noexcept;

struct LlmOutcome {
    std::optional<Diagnosis> diagnosis;  // the model's, accepted
    std::string note;                    // one line: what happened ("no answer within 8 s", "rejected: ...")
};

// Asks the model about `log` (the full tail; redacted here) when the rules' answer wants it.
// The rules' answer is kept in the model's evidence. Never throws.
LlmOutcome ask_model(const LlmConfig& config, std::string_view log, const Diagnosis& rules_answer,
                     const RedactOptions& redaction = {}) noexcept;

}  // namespace acme::diagnose
