// What the node's network ports moved between two reads: the evidence that tells a hung collective
// from a slow one (stall_cadence_nic, gputrace(8) STALL DETECTION). A collective slowed by a
// congested or degraded link still moves bytes on every node of its ring, at a lower rate (and a
// port that has data queued and no credits counts port_xmit_wait); a hung one moves none. The GPUs,
// the processes' /proc counters and their CPU read the same in both (NVIDIA/nccl#968: RDMA bypasses
// the kernel's I/O accounting), so only the ports tell them apart.
// Read: every InfiniBand/RoCE port's counters/port_xmit_data, port_rcv_data (units of 4 octets,
// kernel Documentation/ABI/stable/sysfs-class-infiniband) and port_xmit_wait; a port without them
// (EFA) its hw_counters/*_bytes. Every netdev's statistics/rx_bytes and tx_bytes but lo's is added
// (NCCL's socket transport, IPoIB): other traffic there can only make the ports read as moving,
// which leaves the verdict where it was without them. A node without /sys/class/infiniband (or with
// no port counter readable) has no evidence: nothing changes there. The counters are the node's,
// not the job's: a neighbour's traffic reads as the job's (a later verdict, never a sooner one).
// A 32-bit counter stuck at its maximum (PortCounters saturate; the kernel reads the 64-bit
// extended ones where the HCA has them), a counter that went back, or a port that came or went,
// makes the read unknown. Bounded: at most 32 devices of 8 ports and 64 netdevs, each file one
// read of at most 64 bytes, every component opened O_NOFOLLOW under a directory fd (only the
// class directory's own entries, the kernel's links to the devices, are followed). Reads need no
// privilege (the files are 0444). Pure parser unit-tested and fuzzed (gputrace_args_fuzz.cpp).
// A device that always carries other traffic (a management Ethernet over 1 MiB/s) makes its node's
// ports always read as moving, so the faster verdict never comes there: the site leaves it out
// with stall_cadence_nic_ignore (never a device the job's collectives may take).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace acme::telemetry {

// What moved since the previous read.
struct NicDelta {
    bool seen = false;     // a previous read to compare with, the same counters, every one readable
    double bytes = 0;      // octets sent and received over every port and netdev
    double xmit_wait = 0;  // port_xmit_wait ticks: data queued with no credits to send it (congestion)
};

// One sysfs counter file ("12345\n"); nullopt for anything else.
std::optional<unsigned long long> parse_counter(std::string_view text);

// stall_cadence_nic_ignore: the devices left out of the evidence, a comma-separated list of
// names or fnmatch(3) globs ("eno1,docker*"), matched against each netdev's name and each RDMA
// device's (class/infiniband). Empty: none. At most 16 entries of at most 64 characters each,
// of letters, digits and . _ - : @ and the glob's * ? [ ] ! ^; nullopt for anything else.
std::optional<std::vector<std::string>> parse_nic_ignore(std::string_view text);
std::string format_nic_ignore(const std::vector<std::string>& ignore);
// Whether `name` is one of `ignore`'s names or matches one of its globs.
bool nic_ignored(const std::vector<std::string>& ignore, std::string_view name);

class NicTraffic {
public:
    // `ignore`: devices left out (stall_cadence_nic_ignore); lo is always left out.
    explicit NicTraffic(std::string sys_root = "/sys", std::vector<std::string> ignore = {});
    // False on a node without /sys/class/infiniband or no port counter read: no evidence here.
    bool present() const { return present_; }
    NicDelta read();

private:
    // Every counter, by "dev/port/file" (or "net/dev/file"); nullopt: some counter unreadable.
    std::optional<std::map<std::string, unsigned long long>> read_all() const;
    std::string root_;
    std::vector<std::string> ignore_;
    bool present_ = false;
    std::optional<std::map<std::string, unsigned long long>> last_;
};

}  // namespace acme::telemetry
