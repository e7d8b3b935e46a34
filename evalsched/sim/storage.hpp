// Reads from shared storage: a checkpoint copied onto a node shares that node's NIC with the
// node's other reads, and all reads share the storage's aggregate bandwidth. The paper found
// the per-node NIC the bottleneck (Fig. 16: 25 Gb/s, per-trial speed falls from 1 to 8 trials
// on a node, then stays flat), which this reproduces. A read's speed is fixed when it starts
// from the reads then in flight, a simplification that favours whoever starts first.
#pragma once

#include <vector>

namespace acme::evalsched::sim {

class Storage {
public:
    Storage(double nic_bytes_per_s, double storage_bytes_per_s) : nic_(nic_bytes_per_s), total_(storage_bytes_per_s) {}

    // Starts a read of `bytes` onto `node` at `now`; returns how long it takes.
    double read(double now, int node, double bytes);

    double bytes_read() const { return bytes_; }
    double nic_bytes_per_s() const { return nic_; }
    double storage_bytes_per_s() const { return total_; }

private:
    struct Flow {
        int node;
        double end;
    };
    double nic_, total_;
    double bytes_ = 0;
    std::vector<Flow> flows_;
};

}  // namespace acme::evalsched::sim
