// Loads the labels store (faultdiag --label) as History for the engine. Separate from
// history.hpp so the engine itself never touches SQLite; faultdiag and the faultguard epilog
// both load it here.
#pragma once

#include <optional>
#include <string>

#include "common/diagnose/history.hpp"

namespace acme::diagnose {

// nullopt with an empty error when the store does not exist yet (no labels: no history);
// nullopt with error set to one line when it exists but cannot be read. Labels whose stored
// signature is unreadable are skipped.
std::optional<History> load_history_noexcept(const std::string& labels_path, std::string& error) noexcept;

}  // namespace acme::diagnose
