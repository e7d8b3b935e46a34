#include "common/slurm/accounting.hpp"

#include <array>
#include <mutex>
#include <vector>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>

namespace acme::slurm {
namespace {

std::string base_state(std::uint32_t state) {
    constexpr std::array<const char*, 12> kNames = {"PENDING",   "RUNNING",    "SUSPENDED", "COMPLETED",
                                                    "CANCELLED", "FAILED",     "TIMEOUT",   "NODE_FAIL",
                                                    "PREEMPTED", "BOOT_FAIL",  "DEADLINE",  "OUT_OF_MEMORY"};
    const std::uint32_t base = state & JOB_STATE_BASE;
    return base < kNames.size() ? kNames[base] : "UNKNOWN";
}

std::string exit_text(std::uint32_t status) {
    // sacct's ExitCode: exit status, then the signal that killed it.
    const unsigned code = (status >> 8) & 0xff, signal = status & 0x7f;
    return std::to_string(code) + ":" + std::to_string(signal);
}

}  // namespace

std::optional<std::vector<AccountedJob>> load_accounted_jobs(const std::vector<std::int64_t>& job_ids, double start,
                                                             double end, std::string& why_not) {
    static std::once_flag once;
    std::call_once(once, [] { slurm_init(nullptr); });
    slurm_conf_t* conf = nullptr;
    if (slurm_load_ctl_conf(0, &conf) != SLURM_SUCCESS) {
        why_not = std::string("slurmctld not reachable (") + slurm_strerror(slurm_get_errno()) + ")";
        return std::nullopt;
    }
    const std::string storage = conf->accounting_storage_type ? conf->accounting_storage_type : "";
    slurm_free_ctl_conf(conf);
    if (storage.empty() || storage == "accounting_storage/none") {
        why_not = "Slurm accounting is not configured (AccountingStorageType=" +
                  (storage.empty() ? std::string("none") : storage) + ")";
        return std::nullopt;
    }
    std::uint16_t flags = 0;
    void* conn = slurmdb_connection_get(&flags);
    if (!conn) {
        why_not = std::string("slurmdbd not reachable (") + slurm_strerror(slurm_get_errno()) + ")";
        return std::nullopt;
    }
    // The condition lives on the stack and its list holds our own elements: slurmdb's destroy
    // helpers xfree(), which must never see memory libslurm did not xmalloc().
    slurmdb_job_cond_t cond{};
    std::vector<slurm_selected_step_t> steps(job_ids.size());
    List step_list = nullptr;
    if (!job_ids.empty()) {
        step_list = slurm_list_create(nullptr);
        for (size_t i = 0; i < job_ids.size(); ++i) {
            steps[i].array_task_id = NO_VAL;
            steps[i].het_job_offset = NO_VAL;
            steps[i].step_id.job_id = static_cast<std::uint32_t>(job_ids[i]);
            steps[i].step_id.step_id = NO_VAL;
            steps[i].step_id.step_het_comp = NO_VAL;
            slurm_list_append(step_list, &steps[i]);
        }
        cond.step_list = step_list;
    } else {
        cond.usage_start = static_cast<time_t>(start);
        cond.usage_end = static_cast<time_t>(end);
    }
    cond.flags = JOBCOND_FLAG_NO_STEP;
    // 0 would mean "jobs whose scheduling flags include none": no job at all (sacct sets this too).
    cond.db_flags = SLURMDB_JOB_FLAG_NOTSET;
    List jobs = slurmdb_jobs_get(conn, &cond);
    if (step_list) slurm_list_destroy(step_list);
    if (!jobs) {
        why_not = std::string("slurmdbd query failed (") + slurm_strerror(slurm_get_errno()) + ")";
        slurmdb_connection_close(&conn);
        return std::nullopt;
    }
    std::vector<AccountedJob> out;
    ListIterator it = slurm_list_iterator_create(jobs);
    while (auto* job = static_cast<slurmdb_job_rec_t*>(slurm_list_next(it))) {
        out.push_back({job->jobid, base_state(job->state), static_cast<double>(job->start),
                       static_cast<double>(job->end), exit_text(job->exitcode)});
    }
    slurm_list_iterator_destroy(it);
    slurm_list_destroy(jobs);
    slurmdb_connection_close(&conn);
    return out;
}

}  // namespace acme::slurm
