// faultguard's user options by name, and what another plugin may ask about them. gputrace
// traces a job that asked for recovery (its GPU events find the faulty node): it asks here
// instead of spelling faultguard's environment names itself. Header-only: plugins compile it in.
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>

#include "spank/option_env.hpp"

namespace acme::faultguard {

inline constexpr std::string_view kPluginName = "faultguard";
inline constexpr std::string_view kJobTypeOption = "llm-job-type";
inline constexpr std::string_view kAutoRecoverOption = "auto-recover";
inline constexpr std::string_view kCkptDirOption = "ckpt-dir";

// In job_script context (any plugin's job prolog or epilog): did the job give --auto-recover
// (or ACME_AUTO_RECOVER)? Slurm validated the value at submission.
inline bool job_asked_auto_recover() {
    return std::getenv(spank::job_script_option_env(kPluginName, kAutoRecoverOption).c_str()) != nullptr;
}

// In job_script context: the job's --ckpt-dir (or ACME_CKPT_DIR); empty when not given. The
// sampler watches it grow: a checkpoint being written is progress.
inline std::string job_ckpt_dir() {
    const char* v = std::getenv(spank::job_script_option_env(kPluginName, kCkptDirOption).c_str());
    return v ? std::string(v) : std::string();
}

}  // namespace acme::faultguard
