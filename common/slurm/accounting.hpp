// libslurm's slurmdb API: Slurm's own job accounting (slurmdbd), where a cluster runs it. gpuacct
// and faultdiag read every job run from it (with the acme record in its AdminComment), and in
// spool mode check the node spools' job records against it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace acme::slurm {

struct AccountedJob {
    std::uint32_t job_id = 0;
    std::string state;      // COMPLETED, FAILED ... (base state word)
    double start = 0, end = 0;
    std::string exit_code;  // "EXIT:SIGNAL"
};

// Jobs slurmdbd holds for the window (or the ids, when given). nullopt with `why_not` set when
// accounting is not there: AccountingStorageType is accounting_storage/none, slurmctld cannot
// be asked, or slurmdbd does not answer.
std::optional<std::vector<AccountedJob>> load_accounted_jobs(const std::vector<std::int64_t>& job_ids, double start,
                                                             double end, std::string& why_not);

// One run of a job as slurmdbd keeps it: a requeued job has one row per run (sacct -D).
struct AccountedRun {
    std::uint32_t job_id = 0;
    std::uint64_t db_index = 0;  // slurmdbd's row: later runs have higher ones
    std::string user, account, partition, name, nodes;
    std::int64_t uid = -1;
    std::string state;  // sacct's word: COMPLETED, FAILED, REQUEUED, CANCELLED ...
    std::string exit_code, derived_exit_code;  // "EXIT:SIGNAL"
    double submit = 0, start = 0, end = 0;
    int num_nodes = 0;
    std::optional<std::int64_t> gpus;  // gres/gpu in the allocated TRES; nullopt: not accounted
    std::string admin_comment;
    std::string comment;  // the job's comment (sbatch --comment: may carry llm-job-type=)
    // seff's numbers. MaxRSS is the largest of the steps' (TRESUsageInMax mem).
    std::int64_t req_cpus = 0, alloc_cpus = 0;
    std::optional<std::int64_t> req_mem_bytes, max_rss_bytes;
    double total_cpu_s = 0, elapsed_s = 0;
    // For sacct's filters and gpuacct's job view: the time limit in minutes (nullopt when
    // unlimited or not set), the QOS by name, the group id, the cluster and the association.
    std::optional<std::uint32_t> timelimit_min;
    bool timelimit_unlimited = false;
    std::string qos, cluster;
    std::int64_t gid = -1;
    std::uint32_t associd = 0;
};

struct RunQuery {
    std::vector<std::int64_t> job_ids;  // empty: every job of the window
    double start = 0, end = 0;          // the window, when no ids are given (sacct -S/-E)
    bool steps = true;                  // false: no steps, so no MaxRSS or TotalCPU (faster)
    // false: AccountedRun::qos left empty. Naming the QOS costs a round trip to slurmdbd of its
    // own (a tenth of a second on the minicluster), for the few views that show or filter on it.
    bool qos_names = true;
};

// Every run slurmdbd lets the caller see (PrivateData applies: slurmdbd, not this code, decides
// whose jobs come back), in slurmdbd's order. nullopt with `why_not` as load_accounted_jobs.
std::optional<std::vector<AccountedRun>> load_accounted_runs(const RunQuery& query, std::string& why_not);

// The same runs handed over one job at a time, so a caller keeps only what it makes of each job
// (and libslurm's list, which slurmdbd sends whole): `count` first, with the number of jobs,
// then `each` with one job's runs, oldest first, jobs by id (every run of a requeue chain
// together: for_each_job_group). Each job's slurmdb records are freed once handed over.
// false with `why_not` set as load_accounted_runs.
bool for_each_accounted_job(const RunQuery& query, const std::function<void(size_t jobs)>& count,
                            const std::function<void(std::span<const AccountedRun> runs)>& each, std::string& why_not);

// Orders `rows` by job id, then by slurmdbd's row index (a job's runs oldest first), and calls
// `each(first, last)` once per job over its rows. Pure. slurmdbd 22.05 sends a cluster's rows
// "order by id_job, time_submit desc": a job's runs together but newest first, and with several
// clusters (-M, -L) one cluster's rows after another's; sorted here, the order is the one the
// views always used (stable_sort finds little to move in slurmdbd's order).
template <class It, class JobOf, class IndexOf, class Each>
void for_each_job_group(It begin, It end, JobOf job_of, IndexOf index_of, Each each) {
    std::stable_sort(begin, end, [&](const auto& a, const auto& b) {
        return job_of(a) != job_of(b) ? job_of(a) < job_of(b) : index_of(a) < index_of(b);
    });
    for (It first = begin; first != end;) {
        It last = first;
        while (last != end && job_of(*last) == job_of(*first)) ++last;
        each(first, last);
        first = last;
    }
}

// slurm.conf's ClusterName as slurmctld reports it; empty when it cannot be asked.
std::string local_cluster_name();

// Whether slurm.conf names slurmdbd as the accounting storage (asks slurmctld, not slurmdbd).
// `why_not` says why not when it does not or cannot be asked.
bool accounting_is_slurmdbd(std::string& why_not);

// The count of TRES `id` in a TRES string as slurmdbd stores it ("1=4,2=8192,1001=2"); nullopt
// when it is not there or not a number. Pure.
std::optional<std::int64_t> tres_count(std::string_view tres, std::uint32_t id);

}  // namespace acme::slurm
