#include "common/slurm/jobs.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstdint>
#include <mutex>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

namespace acme::slurm {
namespace {

void init_once() {
    static std::once_flag once;
    std::call_once(once, [] { slurm_init(nullptr); });
}

}  // namespace

std::optional<bool> job_is_active(unsigned job_id) {
    init_once();
    job_info_msg_t* msg = nullptr;
    if (slurm_load_job(&msg, job_id, SHOW_ALL) != SLURM_SUCCESS) {
        const int err = slurm_get_errno();
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
    if (slurm_load_job(&msg, job_id, SHOW_ALL | SHOW_DETAIL) != SLURM_SUCCESS) return std::nullopt;
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
        r.comment = str(j.comment);
        r.work_dir = str(j.work_dir);
        r.batch_host = str(j.batch_host);
        r.nodes = str(j.nodes);
        char buf[4096];
        buf[0] = '\0';
        slurm_get_job_stdout(buf, sizeof buf, &j);
        r.std_out = buf;
        buf[0] = '\0';
        slurm_get_job_stderr(buf, sizeof buf, &j);
        r.std_err = buf;
        r.state = j.job_state & JOB_STATE_BASE;
        r.timeout = r.state == JOB_TIMEOUT;
        r.cancelled = r.state == JOB_CANCELLED;
        r.node_fail = r.state == JOB_NODE_FAIL;
        r.oom = r.state == JOB_OOM;
        r.preempted = r.state == JOB_PREEMPTED;
        r.restart_count = j.restart_cnt;
        r.exit_code = j.exit_code;
        out = std::move(r);
    }
    slurm_free_job_info_msg(msg);
    return out;
}

std::vector<std::string> expand_hostlist(const std::string& hostlist) {
    init_once();
    std::vector<std::string> out;
    hostlist_t hl = slurm_hostlist_create(hostlist.c_str());
    if (!hl) return out;
    while (char* host = slurm_hostlist_shift(hl)) {
        out.emplace_back(host);
        free(host);
    }
    slurm_hostlist_destroy(hl);
    return out;
}

}  // namespace acme::slurm
