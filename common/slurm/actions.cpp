#include "common/slurm/actions.hpp"
#include "common/slurm/compat.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>

#include <slurm/slurm.h>

#include "common/slurm/jobs.hpp"

namespace acme::slurm {
namespace {

void init_once() {
    static std::once_flag once;
    std::call_once(once, [] { slurm_init(nullptr); });
}

std::string last_error() { return compat::last_error_text(); }

}  // namespace

std::string drain_node(const std::string& node, const std::string& reason) {
    init_once();
    update_node_msg_t msg;
    slurm_init_update_node_msg(&msg);
    msg.node_names = const_cast<char*>(node.c_str());
    msg.node_state = NODE_STATE_DRAIN;
    msg.reason = const_cast<char*>(reason.c_str());
    compat::set_reason_uid(msg, getuid());
    return slurm_update_node(&msg) == SLURM_SUCCESS ? std::string() : last_error();
}

std::string requeue_job(unsigned job_id) {
    init_once();
    if (compat::requeue(job_id, 0) != SLURM_SUCCESS) {
        const int err = compat::last_errno();
        // Another node of the same job asked first: the job is already on its way back.
        if (err != ESLURM_JOB_PENDING) return slurm_strerror(err);
    }
    return {};
}

std::string signal_job(unsigned job_id, int signal) {
    init_once();
    return compat::kill_job(job_id, static_cast<uint16_t>(signal), KILL_FULL_JOB) == SLURM_SUCCESS ? std::string()
                                                                                                  : last_error();
}

std::string cancel_job(unsigned job_id) {
    init_once();
    return compat::kill_job(job_id, SIGKILL, 0) == SLURM_SUCCESS ? std::string() : last_error();
}

std::string release_job(unsigned job_id, const std::string& exclude_node) {
    init_once();
    job_desc_msg_t desc;
    slurm_init_job_desc_msg(&desc);
    compat::set_job_id(desc, job_id);
    desc.begin_time = time(nullptr) + 1;  // after the revocation's second (actions.hpp)
    std::string excluded;
    if (!exclude_node.empty()) {
        excluded = exclude_node;
        if (const auto record = load_job(job_id); record && !record->exc_nodes.empty()) excluded = record->exc_nodes + "," + exclude_node;
        desc.exc_nodes = excluded.data();
    }
    return slurm_update_job(&desc) == SLURM_SUCCESS ? std::string() : last_error();
}

std::optional<int> node_gpu_count(const std::string& node) {
    init_once();
    node_info_msg_t* msg = nullptr;
    if (slurm_load_node_single(&msg, const_cast<char*>(node.c_str()), SHOW_DETAIL) != SLURM_SUCCESS) return std::nullopt;
    std::optional<int> count;
    for (uint32_t i = 0; msg && i < msg->record_count; ++i) {
        const char* gres = msg->node_array[i].gres;  // "gpu:4", "gpu:h100:8(S:0-1)", "gpu:2,nic:1"
        int total = 0;
        for (const char* p = gres; p && *p;) {
            const char* end = std::strchr(p, ',');
            const std::string item(p, end ? static_cast<std::size_t>(end - p) : std::strlen(p));
            if (item.rfind("gpu", 0) == 0) {
                const auto paren = item.find('(');
                const auto colon = item.rfind(':', paren == std::string::npos ? std::string::npos : paren);
                if (colon != std::string::npos) total += std::atoi(item.c_str() + colon + 1);
            }
            p = end ? end + 1 : nullptr;
        }
        count = total;
    }
    slurm_free_node_info_msg(msg);
    return count;
}

std::string mail_prog(std::string& error) {
    init_once();
    slurm_conf_t* conf = nullptr;
    if (slurm_load_ctl_conf(0, &conf) != SLURM_SUCCESS) {
        error = "slurmctld not reachable (" + last_error() + ")";
        return {};
    }
    std::string prog = conf->mail_prog ? conf->mail_prog : "";
    compat::free_conf(conf);
    if (prog.empty()) error = "slurm.conf sets no MailProg";
    return prog;
}

}  // namespace acme::slurm
