// The one way acme-slurm reaches Slurm's accounting: what slurmctld says of the accounting
// storage, and a slurmdbd connection that closes itself. gpuacct's and faultdiag's reads
// (accounting.cpp) and the epilog's AdminComment (admin_comment.cpp) all open it here, so no
// path closes a connection by hand or leaks one on an early return.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace acme::slurm {

// slurm.conf's accounting settings as slurmctld reports them (slurm_load_ctl_conf).
struct AccountingConf {
    std::string storage;  // AccountingStorageType; "" when unset
    std::string cluster;  // ClusterName
    std::string host, backup_host;
    std::uint16_t port = 0;
};

// nullopt with `why_not` ("slurmctld not reachable (...)") when slurmctld cannot be asked.
std::optional<AccountingConf> load_accounting_conf(std::string& why_not);

// A connection to slurmdbd, closed when it goes out of scope. Move-only.
class SlurmdbdConnection {
public:
    // nullopt with `why_not` ("slurmdbd not reachable (...)") when libslurm cannot connect.
    static std::optional<SlurmdbdConnection> open(std::string& why_not);

    SlurmdbdConnection(SlurmdbdConnection&& other) noexcept;
    SlurmdbdConnection& operator=(SlurmdbdConnection&& other) noexcept;
    SlurmdbdConnection(const SlurmdbdConnection&) = delete;
    SlurmdbdConnection& operator=(const SlurmdbdConnection&) = delete;
    ~SlurmdbdConnection();

    // The handle libslurm's slurmdb_* calls take.
    void* get() const noexcept { return conn_; }
    // Commits what this connection changed: sacctmgr commits after a modify, and without it
    // slurmdbd rolls the change back. False when slurmdbd did not commit.
    bool commit();
    // Ends the connection's open transaction without changes. slurmdbd's database connection
    // reads one snapshot per transaction (InnoDB's repeatable read): a long-lived connection
    // that only reads keeps seeing the value of its first read, whatever others wrote since.
    bool end_read();

private:
    explicit SlurmdbdConnection(void* conn) noexcept : conn_(conn) {}
    void close() noexcept;

    void* conn_ = nullptr;
};

}  // namespace acme::slurm
