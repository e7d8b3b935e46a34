#include "spank/gputrace/core/job_process.hpp"

#include <fstream>
#include <iterator>
#include <string_view>

namespace acme::telemetry {
namespace {

// At most 64 KiB of a /proc file: a cgroup list or an environment is far smaller.
std::string read_small(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::string text;
    if (!in) return text;
    text.resize(65536);
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    return text;
}

}  // namespace

bool process_of_job(const std::string& proc_root, unsigned pid, long long job_id) {
    const std::string dir = proc_root + "/" + std::to_string(pid) + "/";
    // "/job_12/" inside a path, or "/job_12" at a line's end; never "/job_123".
    const std::string component = "/job_" + std::to_string(job_id);
    const std::string cgroups = read_small(dir + "cgroup");
    for (std::size_t at = cgroups.find(component); at != std::string::npos; at = cgroups.find(component, at + 1)) {
        const std::size_t end = at + component.size();
        if (end == cgroups.size() || cgroups[end] == '/' || cgroups[end] == '\n') return true;
    }
    const std::string env = read_small(dir + "environ");
    const std::string want = "SLURM_JOB_ID=" + std::to_string(job_id);
    std::string_view rest(env);
    while (!rest.empty()) {
        const auto nul = rest.find('\0');
        if (rest.substr(0, nul) == want) return true;
        if (nul == std::string_view::npos) break;
        rest.remove_prefix(nul + 1);
    }
    return false;
}

}  // namespace acme::telemetry
