// The JSON forms of a diagnosis: the spool's diagnoses.evidence column (an array of
// {line, source, text}; line is null when the evidence is not a log line) and faultdiag
// --json's object. One place, so the plugin that writes and the command that reads agree.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/diagnose/engine.hpp"

namespace acme::diagnose {

nlohmann::json evidence_to_json(const std::vector<Evidence>& evidence);
std::string evidence_json(const Diagnosis& diagnosis);  // for diagnoses.evidence

// Reads diagnoses.evidence back; entries it cannot read are skipped, never fatal, since the
// column may have been written by an older or newer plugin.
std::vector<Evidence> evidence_from_json(std::string_view text) noexcept;

// {"category", "reason", "confidence", "action", "rule", "evidence"}
nlohmann::json to_json(const Diagnosis& diagnosis);

}  // namespace acme::diagnose
