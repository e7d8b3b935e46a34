#include "common/slurm/slurmdbd.hpp"
#include "common/slurm/compat.hpp"

#include <mutex>
#include <utility>

#include <slurm/slurm.h>
#include <slurm/slurmdb.h>

namespace acme::slurm {
namespace {

std::string text(const char* s) { return s ? s : ""; }

}  // namespace

std::optional<AccountingConf> load_accounting_conf(std::string& why_not) {
    static std::once_flag once;
    std::call_once(once, [] { slurm_init(nullptr); });
    slurm_conf_t* conf = nullptr;
    if (slurm_load_ctl_conf(0, &conf) != SLURM_SUCCESS) {
        why_not = std::string("slurmctld not reachable (") + compat::last_error_text() + ")";
        return std::nullopt;
    }
    AccountingConf out{text(conf->accounting_storage_type), text(conf->cluster_name),
                       text(conf->accounting_storage_host), text(conf->accounting_storage_backup_host),
                       conf->accounting_storage_port};
    compat::free_conf(conf);
    return out;
}

std::optional<SlurmdbdConnection> SlurmdbdConnection::open(std::string& why_not) {
    std::uint16_t flags = 0;
    void* conn = slurmdb_connection_get(&flags);
    if (!conn) {
        why_not = std::string("slurmdbd not reachable (") + compat::last_error_text() + ")";
        return std::nullopt;
    }
    return SlurmdbdConnection(conn);
}

SlurmdbdConnection::SlurmdbdConnection(SlurmdbdConnection&& other) noexcept
    : conn_(std::exchange(other.conn_, nullptr)) {}

SlurmdbdConnection& SlurmdbdConnection::operator=(SlurmdbdConnection&& other) noexcept {
    if (this != &other) {
        close();
        conn_ = std::exchange(other.conn_, nullptr);
    }
    return *this;
}

SlurmdbdConnection::~SlurmdbdConnection() { close(); }

bool SlurmdbdConnection::commit() { return slurmdb_connection_commit(conn_, true) == SLURM_SUCCESS; }

bool SlurmdbdConnection::end_read() { return slurmdb_connection_commit(conn_, false) == SLURM_SUCCESS; }

void SlurmdbdConnection::close() noexcept {
    if (conn_) slurmdb_connection_close(&conn_);
    conn_ = nullptr;
}

}  // namespace acme::slurm
