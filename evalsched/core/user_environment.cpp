#include "evalsched/core/user_environment.hpp"

#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace acme::evalsched {

namespace {
std::string_view name_of(std::string_view entry) { return entry.substr(0, entry.find('=')); }
}  // namespace

bool loader_variable(std::string_view name) {
    if (name.starts_with("LD_")) return name != "LD_LIBRARY_PATH";
    for (std::string_view v : {"GLIBC_TUNABLES", "GCONV_PATH", "GETCONF_DIR", "HOSTALIASES", "LOCALDOMAIN", "LOCPATH", "MALLOC_TRACE", "NIS_PATH",
                               "NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS", "TZDIR"})
        if (name == v) return true;
    return false;
}

bool carried_variable(std::string_view name) {
    for (std::string_view prefix : {"SLURM_", "SBATCH_", "SALLOC_", "SRUN_", "EVALSCHED_"})
        if (name.starts_with(prefix)) return false;
    return !(name.empty() || name == "PWD" || name == "OLDPWD" || name == "SHLVL" || name == "_" || loader_variable(name));
}

std::vector<std::string> capture_environment(char* const* envp, std::vector<std::string>* withheld) {
    std::vector<std::string> out;
    for (char* const* e = envp; e && *e; ++e) {
        const std::string_view entry(*e);
        const auto eq = entry.find('=');
        if (eq == std::string_view::npos || eq == 0) continue;
        if (carried_variable(entry.substr(0, eq))) out.emplace_back(entry);
        else if (withheld && loader_variable(entry.substr(0, eq))) withheld->emplace_back(entry.substr(0, eq));
    }
    return out;
}

std::string withheld_note(const std::vector<std::string>& names) {
    return fmt::format("not carried to the trials: {} (the dynamic loader's and glibc's variables never are; set one in the suite with "
                       "env = {{...}} or setup = \"export ...\" if the harness needs it)",
                       fmt::join(names, ", "));
}

std::vector<std::string> without_loader_variables(const std::vector<std::string>& env, std::vector<std::string>* dropped) {
    std::vector<std::string> out;
    for (const auto& e : env)
        if (!loader_variable(name_of(e))) out.push_back(e);
        else if (dropped) dropped->emplace_back(name_of(e));
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
        if (loader_variable(name_of(e)))
            return fmt::format("environment variable {:.40} steers the dynamic loader or glibc, and evalschedd does not carry it: unset it, or "
                               "set it in the suite (env = {{...}} or setup = \"export ...\"), which runs in the job as you",
                               e.substr(0, eq));
    }
    if (bytes > kMaxEnvironmentBytes)
        return fmt::format("the environment is {} bytes, more than the {} evalsched carries to trials: unset large variables, or set "
                           "what the harness needs with env = {{...}} or setup = \"...\" in the suite",
                           bytes, kMaxEnvironmentBytes);
    return {};
}

std::vector<std::string> merge_environment(const std::vector<std::string>& base, const std::vector<std::string>& fixed) {
    std::set<std::string, std::less<>> names;
    for (const auto& f : fixed) names.emplace(name_of(f));
    std::vector<std::string> out;
    for (const auto& b : base)
        if (!names.count(name_of(b))) out.push_back(b);
    out.insert(out.end(), fixed.begin(), fixed.end());
    return out;
}

}  // namespace acme::evalsched
