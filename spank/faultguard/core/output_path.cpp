#include "spank/faultguard/core/output_path.hpp"

#include <cctype>

#include <fmt/format.h>

namespace acme::faultguard {

std::string expand_output_pattern(std::string_view pattern, const JobNames& job) {
    if (pattern.empty()) pattern = job.array_job_id ? "slurm-%A_%a.out" : "slurm-%j.out";
    std::string out;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] != '%' || i + 1 >= pattern.size()) {
            out += pattern[i];
            continue;
        }
        std::size_t j = i + 1;
        int width = 0;
        while (j < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[j])) && width < 10)
            width = width * 10 + (pattern[j++] - '0');
        if (j >= pattern.size()) {
            out.append(pattern.substr(i));
            break;
        }
        auto number = [&](std::uint64_t v) { out += fmt::format("{:0{}}", v, width); };
        switch (pattern[j]) {
            case '%': out += '%'; break;
            case 'A': number(job.array_job_id ? job.array_job_id : job.job_id); break;
            case 'a': number(job.array_job_id ? job.array_task_id : 0); break;
            case 'j': number(job.job_id); break;
            case 'J': out += fmt::format("{:0{}}.batch", job.job_id, width); break;
            case 'N': out += job.first_node; break;
            case 'n': number(0); break;
            case 's': out += "batch"; break;
            case 't': number(0); break;
            case 'u': out += job.user; break;
            case 'x': out += job.name; break;
            default: out.append(pattern.substr(i, j - i + 1)); break;  // unknown: kept as written
        }
        i = j;
    }
    if (!out.empty() && out.front() != '/' && !job.work_dir.empty()) out = job.work_dir + "/" + out;
    return out;
}

}  // namespace acme::faultguard
