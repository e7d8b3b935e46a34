#include "spank/gputrace/core/job_watch.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <memory>

#include <fmt/format.h>

namespace acme::telemetry {

bool job_has_local_stepd(long long job_id, const std::string& proc_root) {
    std::unique_ptr<DIR, int (*)(DIR*)> dir(opendir(proc_root.c_str()), closedir);
    if (!dir) return true;  // cannot tell: assume alive, slurmctld is asked later anyway
    const std::string prefix = fmt::format("slurmstepd: [{}.", job_id);
    while (const dirent* entry = readdir(dir.get())) {
        if (!std::isdigit(static_cast<unsigned char>(entry->d_name[0]))) continue;
        const std::string path = proc_root + "/" + entry->d_name + "/cmdline";
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        char buf[64];
        const ssize_t n = ::read(fd, buf, sizeof buf);
        ::close(fd);
        if (n >= static_cast<ssize_t>(prefix.size()) && std::string_view(buf, prefix.size()) == prefix) return true;
    }
    return false;
}

}  // namespace acme::telemetry
