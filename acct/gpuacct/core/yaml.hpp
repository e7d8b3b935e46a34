// --yaml: gpuacct's --json document as YAML (sacct --yaml gives its --json the same way). A
// small emitter: block mappings and sequences, strings always quoted (JSON's escapes are valid
// YAML double-quoted escapes), so no value can be read back as another type.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace acme::acct {

std::string to_yaml(const nlohmann::json& document);

}  // namespace acme::acct
