#include "spank/gputrace/core/job_activity.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "spank/gputrace/core/job_watch.hpp"

namespace acme::telemetry {
namespace {

std::optional<unsigned long long> number(std::string_view s) {
    if (s.empty() || s.size() > 20) return std::nullopt;
    unsigned long long v = 0;
    for (const char ch : s) {
        if (ch < '0' || ch > '9') return std::nullopt;
        const unsigned long long next = v * 10 + static_cast<unsigned long long>(ch - '0');
        if (next / 10 != v) return std::nullopt;  // overflow
        v = next;
    }
    return v;
}

// A small /proc file whole (they fit a page); empty when it cannot be read.
std::string slurp(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {};
    std::string out;
    char buf[4096];
    for (ssize_t n; out.size() < 65536 && (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    return out;
}

}  // namespace

std::optional<ProcStat> parse_proc_stat(std::string_view text) {
    const auto open = text.find('(');
    const auto close = text.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
    ProcStat s;
    s.comm = std::string(text.substr(open + 1, close - open - 1));
    // After the name: state(3) ppid(4) ... utime(14) stime(15) cutime(16) cstime(17) ... starttime(22).
    std::vector<std::string_view> f;
    std::string_view rest = text.substr(close + 1);
    while (!rest.empty() && f.size() < 20) {
        while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\n')) rest.remove_prefix(1);
        const auto end = rest.find_first_of(" \n");
        if (!rest.empty()) f.push_back(rest.substr(0, end));
        rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
    }
    if (f.size() < 20 || f[0].size() != 1) return std::nullopt;
    s.state = f[0][0];
    const auto ppid = number(f[1]);
    if (!ppid) return std::nullopt;
    s.ppid = static_cast<long long>(*ppid);
    // cutime and cstime are signed in the kernel's format; a negative one is none.
    for (const std::size_t i : {11, 12, 13, 14}) {
        const auto v = number(f[i]);
        if (!v && !(i >= 13 && !f[i].empty() && f[i].front() == '-')) return std::nullopt;
        s.cpu_ticks += v.value_or(0);
    }
    const auto start = number(f[19]);
    if (!start) return std::nullopt;
    s.start = *start;
    return s;
}

std::optional<ProcIo> parse_proc_io(std::string_view text) {
    ProcIo io;
    int found = 0;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        const std::string_view key = line.substr(0, colon);
        std::string_view value = line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
        unsigned long long* into = key == "rchar" || key == "wchar"               ? &io.calls
                                   : key == "read_bytes" || key == "write_bytes" ? &io.storage
                                                                                  : nullptr;
        if (!into) continue;
        const auto v = number(value);
        if (!v) return std::nullopt;
        *into += *v;
        ++found;
    }
    if (found != 4) return std::nullopt;
    return io;
}

Activity activity_between(const std::vector<ProcSample>& before, const std::vector<ProcSample>& now,
                          double ticks_per_s) {
    Activity a;
    a.seen = !now.empty();
    std::map<std::pair<long long, unsigned long long>, const ProcSample*> was;
    for (const auto& p : before) was[{p.pid, p.start}] = &p;
    double calls = 0, storage = 0, ticks = 0;
    for (const auto& p : now) {
        a.disk_wait = a.disk_wait || p.disk_wait;
        const auto it = was.find({p.pid, p.start});
        const ProcSample zero;
        const ProcSample& b = it == was.end() ? zero : *it->second;
        // Counters only grow; a smaller one (never expected) counts nothing.
        const auto grown = [](unsigned long long x, unsigned long long y) { return y > x ? static_cast<double>(y - x) : 0.0; };
        calls += grown(b.io.calls, p.io.calls);
        storage += grown(b.io.storage, p.io.storage);
        ticks += grown(b.cpu_ticks, p.cpu_ticks);
    }
    a.io_bytes = std::max(calls, storage);
    a.cpu_s = ticks_per_s > 0 ? ticks / ticks_per_s : 0;
    return a;
}

namespace {
ProcSample sample_of(long long pid, const ProcStat& stat) {
    ProcSample p;
    p.pid = pid;
    p.start = stat.start;
    p.cpu_ticks = stat.cpu_ticks;
    p.disk_wait = stat.state == 'D';
    return p;
}
}  // namespace

JobProcesses::JobProcesses(long long job, std::string proc_root) : job_(job), root_(std::move(proc_root)) {}

std::optional<std::vector<ProcSample>> JobProcesses::read() const {
    std::unique_ptr<DIR, int (*)(DIR*)> dir(opendir(root_.c_str()), closedir);
    if (!dir) return std::nullopt;
    struct Entry {
        long long pid;
        ProcStat stat;
    };
    std::vector<Entry> all;
    std::vector<long long> stepds;
    const std::string title = fmt::format("slurmstepd: [{}.", job_);
    const long long self = getpid();
    while (const dirent* e = readdir(dir.get())) {
        const auto pid = number(e->d_name);
        if (!pid) continue;
        const std::string base = root_ + "/" + e->d_name;
        auto stat = parse_proc_stat(slurp(base + "/stat"));
        if (!stat) continue;
        if (stat->comm == "slurmstepd") {
            const std::string cmdline = slurp(base + "/cmdline");
            if (cmdline.compare(0, title.size(), title) == 0 && real_uid_is_root(base + "/status"))
                stepds.push_back(static_cast<long long>(*pid));
        }
        all.push_back({static_cast<long long>(*pid), std::move(*stat)});
    }
    if (stepds.empty()) return std::nullopt;
    std::multimap<long long, const Entry*> children;
    for (const auto& e : all) children.emplace(e.stat.ppid, &e);
    std::vector<ProcSample> out;
    // Depth first from the job's slurmstepds: every descendant is the job's.
    std::vector<long long> unvisited = stepds;
    bool any_io = false;
    while (!unvisited.empty()) {
        const long long parent = unvisited.back();
        unvisited.pop_back();
        const auto [from, to] = children.equal_range(parent);
        for (auto it = from; it != to; ++it) {
            const Entry& e = *it->second;
            if (e.pid == self || std::find(stepds.begin(), stepds.end(), e.pid) != stepds.end()) continue;
            unvisited.push_back(e.pid);
            ProcSample p = sample_of(e.pid, e.stat);
            if (const auto io = parse_proc_io(slurp(fmt::format("{}/{}/io", root_, e.pid)))) {
                p.io = *io;
                any_io = true;
            }
            out.push_back(p);
        }
    }
    // Processes found but no I/O counter readable (not root, /proc mounted hidepid): unseen, so
    // the floor keeps guarding (cadence.hpp).
    if (!any_io) return std::nullopt;
    return out;
}

std::optional<ProcSample> JobProcesses::read_one(long long pid) const {
    const auto stat = parse_proc_stat(slurp(fmt::format("{}/{}/stat", root_, pid)));
    if (!stat) return std::nullopt;  // gone: its counters went to its parent when it was reaped
    ProcSample p = sample_of(pid, *stat);
    const auto io = parse_proc_io(slurp(fmt::format("{}/{}/io", root_, pid)));
    if (!io) return std::nullopt;
    p.io = *io;
    return p;
}

std::optional<std::vector<ProcSample>> JobProcesses::read_known() const {
    std::vector<ProcSample> out;
    for (const auto& before : *last_) {
        const auto p = read_one(before.pid);
        // A pid reused by another process is not the job's.
        if (p && p->start == before.start) out.push_back(*p);
    }
    if (out.empty()) return std::nullopt;
    return out;
}

Activity JobProcesses::look(bool full) {
    auto now = full || !last_ ? read() : read_known();
    if (!now) {
        last_.reset();
        return {};
    }
    static const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    // Without a baseline the span's activity is unknown, not none: unseen for this look.
    Activity a = last_ ? activity_between(*last_, *now, ticks) : Activity{};
    last_ = std::move(now);
    return a;
}

}  // namespace acme::telemetry
