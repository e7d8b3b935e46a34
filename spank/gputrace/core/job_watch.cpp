#include "spank/gputrace/core/job_watch.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <memory>
#include <string_view>

#include <fmt/format.h>

namespace acme::telemetry {

// Any process may title itself "slurmstepd: [JOB." (a user's, to keep its job looking alive);
// slurmstepd runs as root. The real uid from status, not the owner of /proc/PID, which a
// process made non-dumpable shows as root.
bool real_uid_is_root(const std::string& status_path) {
    const int fd = ::open(status_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0) return false;
    const std::string_view text(buf, static_cast<std::size_t>(n));
    const auto at = text.find("\nUid:");
    if (at == std::string_view::npos) return false;
    std::size_t i = at + 5;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    return i + 1 < text.size() && text[i] == '0' && (text[i + 1] == '\t' || text[i + 1] == ' ');
}

namespace {

// A root slurmstepd titled "slurmstepd: [JOB.STEP]" (sampler_wait_c.h has the same look for a
// step other than extern, in C before the sampler's exec).
bool find_stepd(long long job_id, const std::string& proc_root) {
    std::unique_ptr<DIR, int (*)(DIR*)> dir(opendir(proc_root.c_str()), closedir);
    if (!dir) return true;  // cannot tell: assume it is there (callers then ask slurmctld or stop waiting)
    const std::string prefix = fmt::format("slurmstepd: [{}.", job_id);
    while (const dirent* entry = readdir(dir.get())) {
        if (!std::isdigit(static_cast<unsigned char>(entry->d_name[0]))) continue;
        const std::string path = proc_root + "/" + entry->d_name + "/cmdline";
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        char buf[64];
        const ssize_t n = ::read(fd, buf, sizeof buf);
        ::close(fd);
        if (n < static_cast<ssize_t>(prefix.size()) || std::string_view(buf, prefix.size()) != prefix) continue;
        if (real_uid_is_root(proc_root + "/" + entry->d_name + "/status")) return true;
    }
    return false;
}

}  // namespace

bool job_has_local_stepd(long long job_id, const std::string& proc_root) { return find_stepd(job_id, proc_root); }

}  // namespace acme::telemetry
