#include "evalsched/core/user_environment.hpp"

#include <set>

#include <fmt/format.h>

namespace acme::evalsched {

bool carried_variable(std::string_view name) {
    for (std::string_view prefix : {"SLURM_", "SBATCH_", "SALLOC_", "SRUN_", "EVALSCHED_"})
        if (name.starts_with(prefix)) return false;
    return !(name.empty() || name == "PWD" || name == "OLDPWD" || name == "SHLVL" || name == "_");
}

std::vector<std::string> capture_environment(char* const* envp) {
    std::vector<std::string> out;
    for (char* const* e = envp; e && *e; ++e) {
        const std::string_view entry(*e);
        const auto eq = entry.find('=');
        if (eq == std::string_view::npos || eq == 0) continue;
        if (carried_variable(entry.substr(0, eq))) out.emplace_back(entry);
    }
    return out;
}

std::string environment_problem(const std::vector<std::string>& env) {
    if (env.size() > kMaxEnvironmentVars)
        return fmt::format("the environment has {} variables, more than the {} evalsched carries to trials: unset some, or set what "
                           "the harness needs with env = {{...}} in the suite",
                           env.size(), kMaxEnvironmentVars);
    std::size_t bytes = 0;
    for (const auto& e : env) {
        bytes += e.size() + 1;
        const auto eq = e.find('=');
        if (eq == std::string::npos || eq == 0) return fmt::format("environment entry {:.40} is not NAME=value", e);
        if (e.find('\0') != std::string::npos) return fmt::format("environment variable {:.40} holds a NUL byte", e.substr(0, eq));
    }
    if (bytes > kMaxEnvironmentBytes)
        return fmt::format("the environment is {} bytes, more than the {} evalsched carries to trials: unset large variables, or set "
                           "what the harness needs with env = {{...}} or setup = \"...\" in the suite",
                           bytes, kMaxEnvironmentBytes);
    return {};
}

std::vector<std::string> merge_environment(const std::vector<std::string>& base, const std::vector<std::string>& fixed) {
    std::set<std::string, std::less<>> names;
    for (const auto& f : fixed) names.insert(f.substr(0, f.find('=')));
    std::vector<std::string> out;
    for (const auto& b : base)
        if (!names.count(std::string_view(b).substr(0, b.find('=')))) out.push_back(b);
    out.insert(out.end(), fixed.begin(), fixed.end());
    return out;
}

}  // namespace acme::evalsched
