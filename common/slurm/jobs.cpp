#include "common/slurm/jobs.hpp"
#include "common/slurm/compat.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstdint>
#include <mutex>
#include <iterator>
#include <string_view>

#include <slurm/slurm.h>

namespace acme::slurm {
namespace {

void init_once() {
    static std::once_flag once;
    std::call_once(once, [] { slurm_init(nullptr); });
}

// The GPU count in one TRES list: "cpu=8,mem=8000M,gres/gpu=4" (allocated TRES, when the
// cluster accounts gres/gpu) or "gres:gpu:2" / "gres:gpu:h100:2" (requested per node or job).
std::uint32_t gpus_in(const char* tres) {
    if (!tres) return 0;
    const std::string_view text(tres);
    std::size_t start = 0;
    while (start < text.size()) {
        auto end = text.find_first_of(",;", start);
        if (end == std::string_view::npos) end = text.size();
        const auto item = text.substr(start, end - start);
        start = end + 1;
        if (item.rfind("gres/gpu", 0) != 0 && item.rfind("gres:gpu", 0) != 0) continue;
        const auto sep = item.find_last_of(":=");
        std::uint32_t n = 0;
        for (auto i = sep + 1; sep != std::string_view::npos && i < item.size() && item[i] >= '0' && item[i] <= '9'; ++i)
            n = n * 10 + static_cast<std::uint32_t>(item[i] - '0');
        return n;
    }
    return 0;
}

// The job's GPUs: allocated TRES where gres/gpu is accounted, else what it asked for.
std::uint32_t job_gpus(const job_info_t& j) {
    if (auto n = gpus_in(j.tres_alloc_str)) return n;
    if (auto n = gpus_in(j.tres_per_job)) return n;
    return gpus_in(j.tres_per_node) * (j.num_nodes ? j.num_nodes : 1);
}

// As sacct prints them.
const char* state_name(std::uint32_t state) {
    static constexpr const char* names[] = {"PENDING",   "RUNNING",   "SUSPENDED", "COMPLETED",
                                            "CANCELLED", "FAILED",    "TIMEOUT",   "NODE_FAIL",
                                            "PREEMPTED", "BOOT_FAIL", "DEADLINE",  "OUT_OF_MEMORY"};
    return state < std::size(names) ? names[state] : "UNKNOWN";
}

}  // namespace

std::optional<bool> job_is_active(unsigned job_id) {
    init_once();
    job_info_msg_t* msg = nullptr;
    if (compat::load_job(&msg, job_id, SHOW_ALL) != SLURM_SUCCESS) {
        const int err = compat::last_errno();
        if (err == ESLURM_INVALID_JOB_ID) return false;
        return std::nullopt;
    }
    bool active = false;
    for (uint32_t i = 0; msg && i < msg->record_count; ++i) {
        const uint32_t state = msg->job_array[i].job_state & JOB_STATE_BASE;
        if (msg->job_array[i].job_id == job_id && (state == JOB_RUNNING || state == JOB_SUSPENDED)) active = true;
    }
    slurm_free_job_info_msg(msg);
    return active;
}

std::optional<JobRecord> load_job(unsigned job_id) {
    init_once();
    job_info_msg_t* msg = nullptr;
    if (compat::load_job(&msg, job_id, SHOW_ALL | SHOW_DETAIL) != SLURM_SUCCESS) return std::nullopt;
    std::optional<JobRecord> out;
    for (uint32_t i = 0; msg && i < msg->record_count; ++i) {
        job_info_t& j = msg->job_array[i];
        if (j.job_id != job_id) continue;
        auto str = [](const char* s) { return s ? std::string(s) : std::string(); };
        JobRecord r;
        r.job_id = j.job_id;
        r.array_job_id = j.array_job_id;
        r.array_task_id = j.array_task_id;
        r.name = str(j.name);
        r.user = str(j.user_name);
        r.account = str(j.account);
        r.partition = str(j.partition);
        r.qos = str(j.qos);
        r.comment = str(j.comment);
        r.work_dir = str(j.work_dir);
        r.batch_host = str(j.batch_host);
        r.nodes = str(j.nodes);
        r.mail_user = str(j.mail_user);
        char buf[4096];
        buf[0] = '\0';
        slurm_get_job_stdout(buf, sizeof buf, &j);
        r.std_out = buf;
        buf[0] = '\0';
        slurm_get_job_stderr(buf, sizeof buf, &j);
        r.std_err = buf;
        r.state = j.job_state & JOB_STATE_BASE;
        r.completing = (j.job_state & (JOB_COMPLETING | JOB_REQUEUE)) != 0;
        r.begin_time = static_cast<double>(j.eligible_time ? j.eligible_time : 0);
        r.exc_nodes = str(j.exc_nodes);
        r.timeout = r.state == JOB_TIMEOUT;
        r.cancelled = r.state == JOB_CANCELLED;
        r.node_fail = r.state == JOB_NODE_FAIL;
        r.oom = r.state == JOB_OOM;
        r.preempted = r.state == JOB_PREEMPTED;
        r.restart_count = j.restart_cnt;
        r.exit_code = j.exit_code;
        r.derived_ec = j.derived_ec;
        r.num_nodes = j.num_nodes;
        r.gpus_total = job_gpus(j);
        r.submit_time = static_cast<double>(j.submit_time);
        r.start_time = static_cast<double>(j.start_time);
        r.end_time = static_cast<double>(j.end_time);
        r.state_name = state_name(j.job_state & JOB_STATE_BASE);
        out = std::move(r);
    }
    slurm_free_job_info_msg(msg);
    return out;
}

std::vector<std::string> expand_hostlist(const std::string& hostlist) {
    // No slurm_init here: hostlist parsing needs no slurm.conf, and slurm_init() calls fatal()
    // (exits the process) where there is none, e.g. gpuacct -N reading copied spools.
    std::vector<std::string> out;
    compat::Hostlist hl = slurm_hostlist_create(hostlist.c_str());
    if (!hl) return out;
    while (char* host = slurm_hostlist_shift(hl)) {
        out.emplace_back(host);
        free(host);
    }
    slurm_hostlist_destroy(hl);
    return out;
}

}  // namespace acme::slurm
