// faultdiag's two output forms: a block a person reads, and one JSON object per input.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/diagnose/engine.hpp"

namespace acme::faultdiag {

// `title` names the input ("slurm-42.out", "job 42"); `origin` says where the answer came from
// ("stored by faultguard on n1", "re-diagnosed from the spool"), empty for a plain file.
void render_plain(std::ostream& out, const std::string& title, const std::string& origin,
                  const diagnose::Diagnosis& diagnosis);

nlohmann::json render_json(const std::string& title, const std::string& origin, const diagnose::Diagnosis& diagnosis);

}  // namespace acme::faultdiag
