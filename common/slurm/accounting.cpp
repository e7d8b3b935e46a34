#include "common/slurm/accounting.hpp"
#include "common/slurm/compat.hpp"
#include "common/slurm/slurmdbd.hpp"

#include <pwd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <vector>

#include <slurm/slurm.h>
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

// sacct's words: an earlier run of a requeued job is REQUEUED whatever its base state.
std::string state_text(std::uint32_t state) {
    if (state & JOB_REQUEUE) return "REQUEUED";
    return base_state(state);
}

std::string exit_text(std::uint32_t status) {
    // sacct's ExitCode: exit status, then the signal that killed it.
    const unsigned code = (status >> 8) & 0xff, signal = status & 0x7f;
    return std::to_string(code) + ":" + std::to_string(signal);
}

// TRES ids 1 (cpu) and 2 (mem) are fixed by Slurm; gres/gpu's is given out when the TRES is
// first configured, so it is asked of slurmdbd.
constexpr std::uint32_t kTresCpu = 1, kTresMem = 2;

// A slurmdbd connection once slurmctld says accounting goes to a storage; nullopt with
// `why_not` set otherwise.
std::optional<SlurmdbdConnection> connect(std::string& why_not) {
    const auto conf = load_accounting_conf(why_not);
    if (!conf) return std::nullopt;
    if (conf->storage.empty() || conf->storage == "accounting_storage/none") {
        why_not = "Slurm accounting is not configured (AccountingStorageType=" +
                  (conf->storage.empty() ? std::string("none") : conf->storage) + ")";
        return std::nullopt;
    }
    return SlurmdbdConnection::open(why_not);
}

// The job condition for ids or a window. It lives with the caller and its list holds the
// caller's own elements: slurmdb's destroy helpers xfree(), which must never see memory libslurm
// did not xmalloc().
struct JobQuery {
    slurmdb_job_cond_t cond{};
    std::vector<slurm_selected_step_t> steps;
    compat::List step_list = nullptr;

    JobQuery(const std::vector<std::int64_t>& job_ids, double start, double end, std::uint32_t flags)
        : steps(job_ids.size()) {
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
        // NO_TRUNC, as sacct sets it unless -T: the job's own times, not cut to the window.
        // Without it slurmdbd cuts them and asks MariaDB for each job's suspended time, one
        // query per job (5x sacct's time at 10,000 jobs); gpuacct -T cuts them itself.
        cond.flags = flags | JOBCOND_FLAG_NO_TRUNC;
        // 0 would mean "jobs whose scheduling flags include none": no job at all (sacct sets this too).
        cond.db_flags = SLURMDB_JOB_FLAG_NOTSET;
    }
    ~JobQuery() {
        if (step_list) slurm_list_destroy(step_list);
    }
    JobQuery(const JobQuery&) = delete;
    JobQuery& operator=(const JobQuery&) = delete;
};

std::optional<std::uint32_t> gpu_tres_id(void* conn) {
    slurmdb_tres_cond_t cond{};
    compat::List tres = slurmdb_tres_get(conn, &cond);
    if (!tres) return std::nullopt;
    std::optional<std::uint32_t> id;
    compat::ListIterator it = slurm_list_iterator_create(tres);
    while (auto* t = static_cast<slurmdb_tres_rec_t*>(slurm_list_next(it)))
        if (t->type && t->name && std::string_view(t->type) == "gres" && std::string_view(t->name) == "gpu") id = t->id;
    slurm_list_iterator_destroy(it);
    slurm_list_destroy(tres);
    return id;
}

std::string user_name(const slurmdb_job_rec_t& job) {
    if (job.user && *job.user) return job.user;
    passwd pw{}, *found = nullptr;
    std::array<char, 4096> buffer{};
    if (getpwuid_r(job.uid, &pw, buffer.data(), buffer.size(), &found) == 0 && found) return pw.pw_name;
    return std::to_string(job.uid);
}

std::string text(const char* s) { return s ? s : ""; }

// QOS ids to names, asked once per query (slurmdbd keeps a job's QOS as its id).
std::map<std::uint32_t, std::string> qos_names(void* conn) {
    std::map<std::uint32_t, std::string> out;
    slurmdb_qos_cond_t cond{};
    compat::List qos = slurmdb_qos_get(conn, &cond);
    if (!qos) return out;
    compat::ListIterator it = slurm_list_iterator_create(qos);
    while (auto* q = static_cast<slurmdb_qos_rec_t*>(slurm_list_next(it)))
        if (q->name) out[q->id] = q->name;
    slurm_list_iterator_destroy(it);
    slurm_list_destroy(qos);
    return out;
}

AccountedRun run_of(const slurmdb_job_rec_t& job, std::optional<std::uint32_t> gpu_id,
                    const std::map<std::uint32_t, std::string>& qos) {
    AccountedRun r;
    r.job_id = job.jobid;
    r.db_index = job.db_index;
    r.user = user_name(job);
    r.uid = job.uid;
    r.account = text(job.account);
    r.partition = text(job.partition);
    r.name = text(job.jobname);
    r.nodes = text(job.nodes);
    if (r.nodes == "None assigned") r.nodes.clear();
    r.state = state_text(job.state);
    r.exit_code = exit_text(job.exitcode);
    r.derived_exit_code = exit_text(job.derived_ec);
    r.submit = static_cast<double>(job.submit);
    r.start = static_cast<double>(job.start);
    r.end = static_cast<double>(job.end);
    r.num_nodes = static_cast<int>(job.alloc_nodes);
    const std::string alloc = text(job.tres_alloc_str), req = text(job.tres_req_str);
    // A GPU TRES that is accounted but not held is 0 GPUs; not accounted at all is unknown.
    if (gpu_id) r.gpus = tres_count(alloc, *gpu_id).value_or(alloc.empty() ? -1 : 0);
    if (r.gpus && *r.gpus < 0) r.gpus.reset();
    r.admin_comment = text(job.admin_comment);
    r.comment = text(job.derived_es);  // slurmdbd keeps the job's comment here (sacct's Comment)
    r.req_cpus = job.req_cpus;
    r.alloc_cpus = tres_count(alloc, kTresCpu).value_or(0);
    if (const auto mem = tres_count(req, kTresMem)) r.req_mem_bytes = *mem * 1024 * 1024;  // MB
    r.elapsed_s = job.elapsed;
    double step_cpu = 0;
    if (job.steps) {
        compat::ListIterator it = slurm_list_iterator_create(job.steps);
        while (auto* step = static_cast<slurmdb_step_rec_t*>(slurm_list_next(it))) {
            step_cpu += static_cast<double>(step->tot_cpu_sec) + step->tot_cpu_usec / 1e6;
            // Bytes, the largest of any task of the step (sacct's MaxRSS).
            if (const auto rss = tres_count(text(step->stats.tres_usage_in_max), kTresMem))
                r.max_rss_bytes = std::max(r.max_rss_bytes.value_or(0), *rss);
        }
        slurm_list_iterator_destroy(it);
    }
    // slurmdbd sums the steps into the job's own TotalCPU; older ones leave it 0.
    const double job_cpu = static_cast<double>(job.tot_cpu_sec) + job.tot_cpu_usec / 1e6;
    r.total_cpu_s = job_cpu > 0 ? job_cpu : step_cpu;
    if (job.timelimit == INFINITE) r.timelimit_unlimited = true;
    else if (job.timelimit != NO_VAL && job.timelimit != 0) r.timelimit_min = job.timelimit;
    if (const auto q = qos.find(job.qosid); q != qos.end()) r.qos = q->second;
    r.cluster = text(job.cluster);
    r.gid = job.gid;
    r.associd = job.associd;
    return r;
}

}  // namespace

std::optional<std::int64_t> tres_count(std::string_view tres, std::uint32_t id) {
    size_t pos = 0;
    while (pos < tres.size()) {
        size_t comma = tres.find(',', pos);
        if (comma == std::string_view::npos) comma = tres.size();
        const std::string_view item = tres.substr(pos, comma - pos);
        const size_t eq = item.find('=');
        std::uint32_t key = 0;
        if (eq != std::string_view::npos) {
            const auto [k_end, k_ec] = std::from_chars(item.data(), item.data() + eq, key);
            if (k_ec == std::errc() && k_end == item.data() + eq && key == id) {
                std::int64_t value = 0;
                const auto [v_end, v_ec] = std::from_chars(item.data() + eq + 1, item.data() + item.size(), value);
                if (v_ec == std::errc() && v_end == item.data() + item.size() && eq + 1 < item.size()) return value;
                return std::nullopt;
            }
        }
        pos = comma + 1;
    }
    return std::nullopt;
}

std::string local_cluster_name() {
    std::string ignored;
    const auto conf = load_accounting_conf(ignored);
    return conf ? conf->cluster : std::string();
}

bool accounting_is_slurmdbd(std::string& why_not) {
    const auto conf = load_accounting_conf(why_not);
    if (!conf) return false;
    if (conf->storage != "accounting_storage/slurmdbd") {
        why_not = "Slurm accounting is not slurmdbd (AccountingStorageType=" +
                  (conf->storage.empty() ? std::string("none") : conf->storage) + ")";
        return false;
    }
    return true;
}

namespace {

// slurmdbd's answer to a RunQuery: its job records, taken out of libslurm's list (so each can be
// freed on its own) with what turns one into an AccountedRun. Frees whatever is left.
struct RunRecords {
    std::vector<slurmdb_job_rec_t*> records;
    std::optional<std::uint32_t> gpu_id;
    std::map<std::uint32_t, std::string> qos;

    RunRecords() = default;
    RunRecords(const RunRecords&) = delete;
    RunRecords& operator=(const RunRecords&) = delete;
    ~RunRecords() {
        for (auto* job : records)
            if (job) slurmdb_destroy_job_rec(job);
    }
    AccountedRun take(slurmdb_job_rec_t*& job) {
        AccountedRun run = run_of(*job, gpu_id, qos);
        slurmdb_destroy_job_rec(job);
        job = nullptr;
        return run;
    }
};

bool query_runs(const RunQuery& query, RunRecords& out, std::string& why_not) {
    const auto conn = connect(why_not);
    if (!conn) return false;
    out.gpu_id = gpu_tres_id(conn->get());
    if (query.qos_names) out.qos = qos_names(conn->get());
    // DUP: every run of a requeued job is its own row, as sacct -D lists them. Steps stay in:
    // MaxRSS and TotalCPU are theirs.
    JobQuery q(query.job_ids, query.start, query.end, JOBCOND_FLAG_DUP | (query.steps ? 0 : JOBCOND_FLAG_NO_STEP));
    compat::List jobs = slurmdb_jobs_get(conn->get(), &q.cond);
    if (!jobs) {
        why_not = std::string("slurmdbd query failed (") + compat::last_error_text() + ")";
        return false;
    }
    out.records.reserve(static_cast<size_t>(slurm_list_count(jobs)));
    while (auto* job = static_cast<slurmdb_job_rec_t*>(slurm_list_pop(jobs))) out.records.push_back(job);
    slurm_list_destroy(jobs);
    return true;
}

}  // namespace

std::optional<std::vector<AccountedRun>> load_accounted_runs(const RunQuery& query, std::string& why_not) {
    RunRecords found;
    if (!query_runs(query, found, why_not)) return std::nullopt;
    std::vector<AccountedRun> out;
    out.reserve(found.records.size());
    // Each record freed once copied: libslurm's records and our runs are not both held whole.
    for (auto*& job : found.records) out.push_back(found.take(job));
    return out;
}

bool for_each_accounted_job(const RunQuery& query, const std::function<void(size_t jobs)>& count,
                            const std::function<void(std::span<const AccountedRun> runs)>& each, std::string& why_not) {
    RunRecords found;
    if (!query_runs(query, found, why_not)) return false;
    auto& records = found.records;
    const auto job_of = [](const slurmdb_job_rec_t* j) { return j->jobid; };
    const auto index_of = [](const slurmdb_job_rec_t* j) { return j->db_index; };
    size_t jobs = 0;
    for_each_job_group(records.begin(), records.end(), job_of, index_of, [&](auto, auto) { ++jobs; });
    count(jobs);
    // One job's runs at a time (already in order: the second sort finds nothing to move).
    std::vector<AccountedRun> window;
    for_each_job_group(records.begin(), records.end(), job_of, index_of, [&](auto first, auto last) {
        window.clear();
        for (auto it = first; it != last; ++it) window.push_back(found.take(*it));
        each(window);
    });
    return true;
}

std::optional<std::vector<AccountedJob>> load_accounted_jobs(const std::vector<std::int64_t>& job_ids, double start,
                                                             double end, std::string& why_not) {
    const auto conn = connect(why_not);
    if (!conn) return std::nullopt;
    JobQuery q(job_ids, start, end, JOBCOND_FLAG_NO_STEP);
    compat::List jobs = slurmdb_jobs_get(conn->get(), &q.cond);
    if (!jobs) {
        why_not = std::string("slurmdbd query failed (") + compat::last_error_text() + ")";
        return std::nullopt;
    }
    std::vector<AccountedJob> out;
    compat::ListIterator it = slurm_list_iterator_create(jobs);
    while (auto* job = static_cast<slurmdb_job_rec_t*>(slurm_list_next(it))) {
        out.push_back({job->jobid, base_state(job->state), static_cast<double>(job->start),
                       static_cast<double>(job->end), exit_text(job->exitcode)});
    }
    slurm_list_iterator_destroy(it);
    slurm_list_destroy(jobs);
    return out;
}

}  // namespace acme::slurm
