#include "common/slurm/cluster.hpp"
#include "common/slurm/compat.hpp"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <slurm/slurm.h>

#include "common/util/parse.hpp"

namespace acme::slurm {
namespace {

void init_once() {
    static std::once_flag once;
    std::call_once(once, [] { slurm_init(nullptr); });
}

std::string str(const char* s) { return s ? std::string(s) : std::string(); }

std::string last_error(const char* call) { return std::string(call) + ": " + compat::last_error_text(); }

}  // namespace

int gres_gpu_count(const std::string& gres) {
    int total = 0;
    std::size_t pos = 0;
    while (pos <= gres.size()) {
        std::size_t comma = gres.find(',', pos);
        // A comma inside "(S:0,1)" or "(IDX:0,2)" is not an entry separator.
        std::size_t paren = gres.find('(', pos);
        if (paren != std::string::npos && paren < comma) {
            std::size_t close = gres.find(')', paren);
            comma = close == std::string::npos ? std::string::npos : gres.find(',', close);
        }
        std::string entry = gres.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        if (auto p = entry.find('('); p != std::string::npos) entry.resize(p);
        if (entry.rfind("gpu", 0) == 0 && (entry.size() == 3 || entry[3] == ':')) {
            auto colon = entry.rfind(':');
            if (colon != std::string::npos && colon > 2) {
                try {
                    total += std::stoi(entry.substr(colon + 1));
                } catch (...) {
                    // "gpu:a100" with no count: one of that type, as Slurm reads it.
                    total += 1;
                }
            } else {
                total += 1;
            }
        }
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    return total;
}

int usable_gpus(const std::vector<NodeGpus>& nodes) {
    int gpus = 0;
    for (const auto& n : nodes)
        if (n.usable) gpus += n.total_gpus;
    return gpus;
}

std::optional<double> backfill_interval_s(std::string& error) {
    init_once();
    slurm_conf_t* conf = nullptr;
    if (slurm_load_ctl_conf(0, &conf) != SLURM_SUCCESS) {
        error = last_error("slurm_load_ctl_conf");
        return std::nullopt;
    }
    double interval = 30;  // Slurm's default
    const std::string params = conf->sched_params ? conf->sched_params : "";
    compat::free_conf(conf);
    // A comma-separated list: "bf_interval=1,bf_resolution=60,...". Slurm takes 1..10800 s.
    for (const auto& item : util::split_list(params)) {
        const auto kv = util::split_key_value(item);
        if (!kv || kv->first != "bf_interval") continue;
        const auto v = util::parse_double(kv->second);
        if (v && *v >= 1 && *v <= 10800) interval = *v;
    }
    return interval;
}

std::optional<std::vector<NodeGpus>> load_node_gpus(std::string& error) {
    init_once();
    node_info_msg_t* msg = nullptr;
    if (slurm_load_node(0, &msg, SHOW_ALL | SHOW_DETAIL) != SLURM_SUCCESS) {
        error = last_error("slurm_load_node");
        return std::nullopt;
    }
    std::vector<NodeGpus> out;
    for (uint32_t i = 0; msg && i < msg->record_count; ++i) {
        node_info_t& n = msg->node_array[i];
        if (!n.name) continue;
        NodeGpus g;
        g.name = n.name;
        g.total_gpus = gres_gpu_count(str(n.gres));
        g.used_gpus = gres_gpu_count(str(n.gres_used));
        const uint32_t base = n.node_state & NODE_STATE_BASE;
        const uint32_t bad = NODE_STATE_DRAIN | NODE_STATE_NO_RESPOND | NODE_STATE_FAIL | NODE_STATE_MAINT | NODE_STATE_RES;
        g.usable = base != NODE_STATE_DOWN && base != NODE_STATE_FUTURE && base != NODE_STATE_UNKNOWN && !(n.node_state & bad);
        g.raw_state = n.node_state;
        out.push_back(std::move(g));
    }
    slurm_free_node_info_msg(msg);
    return out;
}

bool JobView::pending() const { return state == JOB_PENDING; }
bool JobView::active() const { return state == JOB_PENDING || state == JOB_RUNNING || state == JOB_SUSPENDED; }
bool JobView::succeeded() const { return state == JOB_COMPLETE && exit_code == 0; }

namespace {

std::vector<JobView> views_of(const job_info_msg_t* msg) {
    std::vector<JobView> out;
    for (uint32_t i = 0; msg && i < msg->record_count; ++i) {
        const job_info_t& j = msg->job_array[i];
        JobView v;
        v.job_id = j.job_id;
        v.name = str(j.name);
        v.comment = str(j.comment);
        v.nodes = str(j.nodes);
        v.sched_nodes = str(j.sched_nodes);
        v.user_id = j.user_id;
        v.state = j.job_state & JOB_STATE_BASE;
        v.exit_code = j.exit_code;
        v.timeout = v.state == JOB_TIMEOUT || v.state == JOB_DEADLINE;
        v.cancelled = v.state == JOB_CANCELLED || v.state == JOB_PREEMPTED;
        v.node_fail = v.state == JOB_NODE_FAIL || v.state == JOB_BOOT_FAIL;
        v.oom = v.state == JOB_OOM;
        v.completing = (j.job_state & JOB_COMPLETING) != 0;
        v.dependency_never = v.state == JOB_PENDING && j.state_reason == WAIT_DEP_INVALID;
        v.dependency_killed = v.state == JOB_CANCELLED && j.state_reason == WAIT_DEP_INVALID;
        v.start_time = j.start_time;
        v.end_time = j.end_time;
        v.time_limit_min = j.time_limit == NO_VAL || j.time_limit == INFINITE ? 0 : j.time_limit;
        out.push_back(std::move(v));
    }
    return out;
}

}  // namespace

std::optional<std::vector<JobView>> load_jobs(std::string& error) {
    init_once();
    job_info_msg_t* msg = nullptr;
    if (slurm_load_jobs(0, &msg, SHOW_ALL) != SLURM_SUCCESS) {
        error = last_error("slurm_load_jobs");
        return std::nullopt;
    }
    std::vector<JobView> out = views_of(msg);
    slurm_free_job_info_msg(msg);
    return out;
}

std::optional<JobsChange> load_jobs_since(std::time_t& since, std::string& error) {
    init_once();
    job_info_msg_t* msg = nullptr;
    if (slurm_load_jobs(since, &msg, SHOW_ALL) != SLURM_SUCCESS) {
        if (compat::last_errno() == SLURM_NO_CHANGE_IN_DATA) return JobsChange{};
        error = last_error("slurm_load_jobs");
        return std::nullopt;
    }
    JobsChange out{true, views_of(msg)};
    if (msg) since = msg->last_update;
    slurm_free_job_info_msg(msg);
    return out;
}

JobView step_view(std::uint32_t job_id, int wait_status, const std::string& nodes) {
    JobView v;
    v.job_id = job_id;
    v.nodes = nodes;
    v.exit_code = static_cast<std::uint32_t>(wait_status);
    v.state = wait_status == 0 ? JOB_COMPLETE : JOB_FAILED;
    return v;
}

std::optional<std::uint32_t> submit_batch(const BatchJob& job, std::string& error) {
    init_once();
    job_desc_msg_t desc;
    slurm_init_job_desc_msg(&desc);
    // job_desc_msg_t holds non-const char*; libslurm only reads them during the call.
    auto c = [](const std::string& s) { return s.empty() ? nullptr : const_cast<char*>(s.c_str()); };
    desc.name = c(job.name);
    desc.comment = c(job.comment);
    desc.script = c(job.script);
    std::vector<char*> env;
    for (const auto& e : job.environment) env.push_back(const_cast<char*>(e.c_str()));
    env.push_back(nullptr);
    desc.environment = env.data();
    desc.env_size = static_cast<uint32_t>(job.environment.size());
    desc.user_id = job.user_id;
    desc.group_id = job.group_id;
    if (job.time_limit_min) desc.time_limit = job.time_limit_min;
    if (job.time_min_min) desc.time_min = job.time_min_min;
    const std::string tres = job.gpus_per_node > 0 ? "gres:gpu:" + std::to_string(job.gpus_per_node) : "";
    desc.tres_per_node = c(tres);
    desc.req_nodes = c(job.required_node);
    desc.exc_nodes = c(job.excluded_nodes);
    desc.partition = c(job.partition);
    desc.dependency = c(job.dependency);
    desc.work_dir = c(job.work_dir);
    desc.std_out = c(job.std_out);
    desc.min_nodes = 1;
    desc.max_nodes = 1;
    desc.num_tasks = 1;
    submit_response_msg_t* resp = nullptr;
    if (slurm_submit_batch_job(&desc, &resp) != SLURM_SUCCESS) {
        error = last_error("slurm_submit_batch_job");
        return std::nullopt;
    }
    const std::uint32_t id = compat::job_id_of(*resp);
    slurm_free_submit_response_response_msg(resp);
    return id;
}

bool cancel_job(std::uint32_t job_id, std::string& error) {
    init_once();
    if (compat::kill_job(job_id, SIGKILL, 0) == SLURM_SUCCESS) return true;
    const int err = compat::last_errno();
    if (err == ESLURM_INVALID_JOB_ID || err == ESLURM_ALREADY_DONE) return true;
    error = last_error("slurm_kill_job");
    return false;
}

std::optional<bool> step_running(std::uint32_t job_id, std::uint32_t step_id, std::string& error) {
    init_once();
    job_step_info_response_msg_t* msg = nullptr;
    if (compat::get_job_steps(job_id, step_id, &msg, SHOW_ALL) != SLURM_SUCCESS) {
        const int err = compat::last_errno();
        if (err == ESLURM_INVALID_JOB_ID || err == ESLURM_ALREADY_DONE) return false;
        error = last_error("slurm_get_job_steps");
        return std::nullopt;
    }
    bool running = false;
    for (uint32_t i = 0; msg && i < msg->job_step_count; ++i)
        if (msg->job_steps[i].step_id.step_id == step_id) running = true;
    slurm_free_job_step_info_response_msg(msg);
    return running;
}

bool signal_batch(std::uint32_t job_id, int signal, std::string& error) {
    init_once();
    if (compat::kill_job(job_id, static_cast<uint16_t>(signal), KILL_JOB_BATCH) == SLURM_SUCCESS) return true;
    const int err = compat::last_errno();
    if (err == ESLURM_INVALID_JOB_ID || err == ESLURM_ALREADY_DONE) return true;
    error = last_error("slurm_kill_job");
    return false;
}

}  // namespace acme::slurm
