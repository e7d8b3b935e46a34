#include "spank/gputrace/core/nic_traffic.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

namespace acme::telemetry {
namespace {

constexpr std::size_t kDevices = 32, kPorts = 8, kNetdevs = 64, kHwFiles = 16;
constexpr unsigned long long kSaturated32 = 0xffffffffULL;

// An fd closed when it goes out of scope.
struct Fd {
    int fd = -1;
    explicit Fd(int f) : fd(f) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
    bool ok() const { return fd >= 0; }
};

int open_dir(int at, const char* name, bool follow) {
    return ::openat(at, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
}

// The names in directory `fd` (not . or ..), at most `most`, sorted; the fd stays open.
std::vector<std::string> names(int fd, std::size_t most) {
    std::vector<std::string> out;
    const int dup = ::openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dup < 0) return out;
    DIR* d = ::fdopendir(dup);
    if (!d) {
        ::close(dup);
        return out;
    }
    while (const dirent* e = ::readdir(d)) {
        const std::string_view n = e->d_name;
        if (n == "." || n == ".." || n.size() > 64) continue;
        if (out.size() >= most) break;
        out.emplace_back(n);
    }
    ::closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

// One counter file under directory `fd`: nullopt when absent; `bad` set when present but not a
// counter (or a 32-bit one stuck at its maximum: it no longer counts).
std::optional<unsigned long long> counter(int fd, const char* name, bool& bad) {
    const int f = ::openat(fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (f < 0) return std::nullopt;
    char buf[64];
    const ssize_t n = ::read(f, buf, sizeof buf);
    ::close(f);
    const auto v = n > 0 ? parse_counter(std::string_view(buf, static_cast<std::size_t>(n))) : std::nullopt;
    if (!v || *v == kSaturated32) {
        bad = true;
        return std::nullopt;
    }
    return v;
}

}  // namespace

std::optional<unsigned long long> parse_counter(std::string_view text) {
    if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
    if (text.empty() || text.size() > 20) return std::nullopt;
    unsigned long long v = 0;
    for (const char ch : text) {
        if (ch < '0' || ch > '9') return std::nullopt;
        const unsigned long long next = v * 10 + static_cast<unsigned long long>(ch - '0');
        if (next / 10 != v) return std::nullopt;  // overflow
        v = next;
    }
    return v;
}

bool nic_ignored(const std::vector<std::string>& ignore, std::string_view name) {
    const std::string n(name);
    for (const auto& e : ignore)
        if (e == n || ::fnmatch(e.c_str(), n.c_str(), 0) == 0) return true;
    return false;
}

NicTraffic::NicTraffic(std::string sys_root, std::vector<std::string> ignore)
    : root_(std::move(sys_root)), ignore_(std::move(ignore)) {
    last_ = read_all();
    present_ = last_ && last_->count("present") > 0;
}

std::optional<std::map<std::string, unsigned long long>> NicTraffic::read_all() const {
    std::map<std::string, unsigned long long> out;
    bool bad = false;
    const Fd ib(::open((root_ + "/class/infiniband").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!ib.ok()) return out;  // no RDMA device: no evidence (present() false)
    bool any = false;
    for (const auto& dev : names(ib.fd, kDevices)) {
        if (nic_ignored(ignore_, dev)) continue;
        // The class directory's entries are the kernel's links to the devices: followed; nothing below.
        const Fd d(open_dir(ib.fd, dev.c_str(), true));
        const Fd ports(d.ok() ? open_dir(d.fd, "ports", false) : -1);
        if (!ports.ok()) continue;
        for (const auto& port : names(ports.fd, kPorts)) {
            const Fd p(open_dir(ports.fd, port.c_str(), false));
            if (!p.ok()) continue;
            const std::string key = dev + "/" + port + "/";
            const Fd counters(open_dir(p.fd, "counters", false));
            std::optional<unsigned long long> xmit;
            if (counters.ok()) xmit = counter(counters.fd, "port_xmit_data", bad);
            if (xmit) {
                const auto rcv = counter(counters.fd, "port_rcv_data", bad);
                if (!rcv) bad = true;
                // Units of 4 octets (the IB PortCounters' convention, RoCE's too).
                out[key + "bytes"] = 4 * (*xmit + rcv.value_or(0));
                if (const auto wait = counter(counters.fd, "port_xmit_wait", bad)) out[key + "xmit_wait"] = *wait;
                any = true;
                continue;
            }
            // No PMA counters (EFA): the driver's byte counters, if it has them.
            const Fd hw(open_dir(p.fd, "hw_counters", false));
            if (!hw.ok()) continue;
            unsigned long long sum = 0;
            bool found = false;
            std::size_t files = 0;
            for (const auto& f : names(hw.fd, 256)) {
                if (f.size() < 6 || f.compare(f.size() - 6, 6, "_bytes") != 0) continue;
                if (++files > kHwFiles) break;
                if (const auto v = counter(hw.fd, f.c_str(), bad)) {
                    sum += *v;
                    found = true;
                }
            }
            if (found) {
                out[key + "bytes"] = sum;
                any = true;
            }
        }
    }
    if (!any) return out;
    out["present"] = 0;
    // Netdevs: other paths the job's bytes may take (sockets, IPoIB). Only ever adds motion.
    const Fd net(::open((root_ + "/class/net").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (net.ok()) {
        for (const auto& dev : names(net.fd, kNetdevs)) {
            if (dev == "lo" || nic_ignored(ignore_, dev)) continue;
            const Fd d(open_dir(net.fd, dev.c_str(), true));  // the kernel's link (bonding_masters: a file)
            const Fd stats(d.ok() ? open_dir(d.fd, "statistics", false) : -1);
            if (!stats.ok()) continue;
            const auto rx = counter(stats.fd, "rx_bytes", bad), tx = counter(stats.fd, "tx_bytes", bad);
            if (rx && tx) out["net/" + dev] = *rx + *tx;
        }
    }
    if (bad) return std::nullopt;
    return out;
}

NicDelta NicTraffic::read() {
    auto now = read_all();
    NicDelta d;
    present_ = now && now->count("present") > 0;
    if (now && last_ && present_ && now->size() == last_->size()) {
        d.seen = true;
        for (const auto& [key, value] : *now) {
            const auto before = last_->find(key);
            if (before == last_->end() || value < before->second) {  // a port came, or a counter went back
                d.seen = false;
                break;
            }
            const double moved = static_cast<double>(value - before->second);
            if (key.size() > 10 && key.compare(key.size() - 10, 10, "/xmit_wait") == 0) d.xmit_wait += moved;
            else d.bytes += moved;
        }
    }
    last_ = std::move(now);
    return d;
}

}  // namespace acme::telemetry
