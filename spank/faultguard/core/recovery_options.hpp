// The recovery flags users type: --auto-recover[=MAX_RESTARTS] and --ckpt-dir=PATH. Validated
// in sbatch/srun (as the user) so a bad value refuses the submission with one line.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace acme::faultguard {

inline constexpr int kDefaultMaxRestarts = 3;
inline constexpr int kMaxRestartsLimit = 100;

// "" -> 3; "0".."100" -> that; anything else -> nullopt with error naming the flag.
std::optional<int> parse_auto_recover(std::string_view value, std::string& error);

// An absolute path to an existing directory, checked with the caller's rights.
bool check_ckpt_dir(const std::string& path, std::string& error);

}  // namespace acme::faultguard
