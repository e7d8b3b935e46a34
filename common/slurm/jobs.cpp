#include "common/slurm/jobs.hpp"

#include <cerrno>
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

}  // namespace acme::slurm
