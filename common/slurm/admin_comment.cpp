#include "common/slurm/admin_comment.hpp"
#include "common/slurm/compat.hpp"
#include "common/slurm/slurmdbd.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

#include <slurm/slurm.h>
#include <slurm/slurmdb.h>

#include <cerrno>

namespace acme::slurm {
namespace {

std::string errno_text() { return compat::last_error_text(); }

// Whether something accepts TCP connections at host:port within `ms`. libslurm waits up to
// MessageTimeout (10 s by default) for a slurmdbd that is down; an epilog must not.
bool answers(const std::string& host, std::uint16_t port, int ms) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return false;
    bool ok = false;
    for (addrinfo* a = found; a && !ok; a = a->ai_next) {
        const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            ok = true;
        } else if (errno == EINPROGRESS) {
            pollfd p{fd, POLLOUT, 0};
            int so_error = 0;
            socklen_t len = sizeof so_error;
            ok = ::poll(&p, 1, ms) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len) == 0 && so_error == 0;
        }
        ::close(fd);
    }
    freeaddrinfo(found);
    return ok;
}

using Kind = AdminCommentError::Kind;

// The cluster's name and whether it runs slurmdbd (and it answers), as slurmctld says.
bool accounting_cluster(std::string& cluster, AdminCommentError& error) {
    const auto conf = load_accounting_conf(error.text);
    if (!conf) {
        error.kind = Kind::unreachable;  // slurmctld, which the next epilog may reach
        return false;
    }
    cluster = conf->cluster;
    if (conf->storage != "accounting_storage/slurmdbd") {
        error = {Kind::not_slurmdbd,
                 "Slurm accounting is not slurmdbd (AccountingStorageType=" + (conf->storage.empty() ? "none" : conf->storage) + ")"};
        return false;
    }
    const std::string& host = conf->host;
    const std::string& backup = conf->backup_host;
    const std::uint16_t port = conf->port;
    if (!host.empty() && port != 0 && !answers(host, port, 1000) && (backup.empty() || !answers(backup, port, 1000))) {
        error = {Kind::unreachable, "slurmdbd does not answer at " + host + ":" + std::to_string(port) + " within 1 s"};
        return false;
    }
    return true;
}

// A job condition for one job id: its lists hold our own elements, never xfree()d by libslurm.
struct OneJob {
    slurm_selected_step_t step{};
    std::string cluster;
    std::string state;
    slurmdb_job_cond_t cond{};
    OneJob(const JobRow& job, std::string cluster_name) : cluster(std::move(cluster_name)) {
        const bool task = job.array_job_id != 0;
        step.array_task_id = task ? job.array_task_id : NO_VAL;
        step.het_job_offset = NO_VAL;
        step.step_id.job_id = task ? job.array_job_id : job.job_id;
        step.step_id.step_id = NO_VAL;
        step.step_id.step_het_comp = NO_VAL;
        cond.step_list = slurm_list_create(nullptr);
        slurm_list_append(cond.step_list, &step);
        cond.cluster_list = slurm_list_create(nullptr);
        slurm_list_append(cond.cluster_list, cluster.data());
        cond.flags = JOBCOND_FLAG_NO_STEP;
        // 0 would mean "jobs whose scheduling flags include none": no job at all (sacct sets this too).
        cond.db_flags = SLURMDB_JOB_FLAG_NOTSET;
    }
    // Every run of the job (sacct -D), not its newest alone.
    void all_runs() { cond.flags |= JOBCOND_FLAG_DUP; }
    // One row only, for a modify: slurmdbd selects the job's rows in this state within this time
    // window (sacct -s STATE -S -E; a modify never applies a default window) and changes the
    // newest of them, which run_row_filter makes the one row.
    void only(const RowFilter& f) {
        if (f.any) return;
        state = std::to_string(f.state);
        cond.state_list = slurm_list_create(nullptr);
        slurm_list_append(cond.state_list, state.data());
        cond.usage_start = static_cast<time_t>(f.usage_start);
        cond.usage_end = static_cast<time_t>(f.usage_end);
    }
    ~OneJob() {
        slurm_list_destroy(cond.step_list);
        slurm_list_destroy(cond.cluster_list);
        if (cond.state_list) slurm_list_destroy(cond.state_list);
    }
    OneJob(const OneJob&) = delete;
    OneJob& operator=(const OneJob&) = delete;
};

}  // namespace

AdminCommentSession::AdminCommentSession(std::string cluster, SlurmdbdConnection conn)
    : cluster_(std::move(cluster)), conn_(std::move(conn)) {}
AdminCommentSession::AdminCommentSession(AdminCommentSession&&) noexcept = default;
AdminCommentSession& AdminCommentSession::operator=(AdminCommentSession&&) noexcept = default;
AdminCommentSession::~AdminCommentSession() = default;

std::optional<AdminCommentSession> AdminCommentSession::open(AdminCommentError& error) {
    std::string cluster;
    if (!accounting_cluster(cluster, error)) return std::nullopt;
    auto conn = SlurmdbdConnection::open(error.text);
    if (!conn) {
        error.kind = Kind::unreachable;
        return std::nullopt;
    }
    return AdminCommentSession(std::move(cluster), std::move(*conn));
}

std::optional<std::string> AdminCommentSession::load(const JobRow& row, const RunSelector& run, AdminCommentError& error,
                                                     RunRow* found) {
    const unsigned job_id = row.job_id;
    OneJob one(row, cluster_);
    one.all_runs();
    // A fresh snapshot for each read: the last one's transaction would show the field as it
    // was then (a node would take its part, long overwritten, for still there).
    conn_.end_read();
    compat::List jobs = slurmdb_jobs_get(conn_.get(), &one.cond);
    if (!jobs) {
        error = {Kind::failed, "slurmdbd query failed (" + errno_text() + ")"};
        return std::nullopt;
    }
    std::vector<RunRow> rows;
    std::vector<std::string> comments;
    compat::ListIterator it = slurm_list_iterator_create(jobs);
    while (auto* job = static_cast<slurmdb_job_rec_t*>(slurm_list_next(it))) {
        if (job->jobid != job_id) continue;
        rows.push_back({static_cast<long long>(job->submit), static_cast<long long>(job->start),
                        static_cast<long long>(job->end), job->state, false});
        comments.emplace_back(job->admin_comment ? job->admin_comment : "");
    }
    slurm_list_iterator_destroy(it);
    slurm_list_destroy(jobs);
    const auto choice = pick_run_row(rows, run);
    switch (choice.pick) {
        case RunPick::found: break;
        case RunPick::not_yet:
            error = {Kind::no_job, rows.empty() ? "slurmdbd has no job " + std::to_string(job_id)
                                                : "slurmdbd has no row of job " + std::to_string(job_id) + "'s " + describe(run) + " yet"};
            return std::nullopt;
        case RunPick::superseded:
            error = {Kind::superseded, "slurmdbd has no row of job " + std::to_string(job_id) + "'s " + describe(run) +
                                           " yet, though it has a later run's"};
            return std::nullopt;
        case RunPick::unknown:
            error = {Kind::unknown_run, "job " + std::to_string(job_id) +
                                           " was requeued more than once before its epilog asked slurmctld: its run's row cannot be told"};
            return std::nullopt;
    }
    if (found) {
        *found = rows[choice.index];
        found->newest = true;
        for (const auto& r : rows) found->newest = found->newest && r.submit <= found->submit;
    }
    return comments[choice.index];
}

AdminCommentError AdminCommentSession::store(const JobRow& row, const RunRow& run, const std::string& value) {
    const unsigned job_id = row.job_id;
    AdminCommentError error;
    const auto filter = run_row_filter(run);
    if (!filter)
        return {Kind::no_job, "job " + std::to_string(job_id) + "'s row submitted at " + std::to_string(run.submit) +
                                  " is neither started, ended nor the newest: it cannot be named alone"};
    OneJob one(row, cluster_);
    one.only(*filter);
    slurmdb_job_rec_t change{};
    change.derived_ec = NO_VAL;  // unchanged; 0 would overwrite the job's derived exit code
    change.admin_comment = const_cast<char*>(value.c_str());
    compat::List changed = slurmdb_job_modify(conn_.get(), &one.cond, &change);
    if (!changed) {
        error = {Kind::failed, "slurmdbd refused the change (" + errno_text() + ")"};
    } else {
        if (slurm_list_count(changed) == 0)
            error = {Kind::no_job, "slurmdbd has no row of job " + std::to_string(job_id) + " submitted at " +
                                       std::to_string(run.submit) + " in the state it was read in"};
        slurm_list_destroy(changed);
        // sacctmgr commits after a modify; without it slurmdbd rolls the change back.
        if (error.kind == Kind::none && !conn_.commit())
            error = {Kind::failed, "slurmdbd did not commit the change (" + errno_text() + ")"};
    }
    return error;
}

}  // namespace acme::slurm
