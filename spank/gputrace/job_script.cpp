// gputrace_impl.so in job_script context (a fresh `slurmstepd spank prolog|epilog` process per
// call, root, once per node): the prolog of a traced GPU job starts one detached
// acme-gpu-sampler (the shim made the job's heartbeat directory); every epilog stops the
// job's sampler, if any, waits a bounded time for its last flush, and removes what is left.
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/util/parse.hpp"
#include "common/util/spawn.hpp"
#include "spank/faultguard_options.hpp"
#include "spank/gputrace/core/heartbeat_dir.hpp"
#include "spank/gputrace/core/sampler_control.hpp"
#include "spank/gputrace/core/sampler_paths.hpp"
#include "spank/gputrace/core/sampler_wait_c.h"
#include "spank/gputrace/core/textfile_writer.hpp"
#include "spank/gputrace/plugin.hpp"

namespace acme::telemetry::plugin {

using acme::spank::getenv_str;
using acme::spank::plain_node_name;

namespace {

// What the sampler's detached child needs before its exec, prepared before the fork.
struct SamplerWait {
    const char* spool;
    const char* run_dir;
    const char* pidfile;
    unsigned long long job_id;
    double seconds;
};

void wait_before_exec(const void* arg) {
    const auto* w = static_cast<const SamplerWait*>(arg);
    acme_sampler_wait_before_exec(w->spool, w->run_dir, w->pidfile, w->job_id, w->seconds);
}

}  // namespace

int job_script_prolog(spank_t sp, int ac, char** av) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto [config, errors] = load_config(ac, av);
    for (const auto& e : errors) slurm_error("%s", e.c_str());
    uint32_t job_id = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    const bool have_job = spank_get_item(sp, S_JOB_ID, &job_id) == ESPANK_SUCCESS &&
                          spank_get_item(sp, S_JOB_UID, &uid) == ESPANK_SUCCESS &&
                          spank_get_item(sp, S_JOB_GID, &gid) == ESPANK_SUCCESS;
    // Every job's heartbeat directory is the shim's (shim.c): it made it before calling here.
    const auto request = job_request(sp, config);
    const std::string gpus = getenv_str("SLURM_JOB_GPUS");
    if (!request.enabled || gpus.empty()) return 0;

    if (!have_job) {
        slurm_error("%s: job prolog: no job id or owner; not tracing", kPlugin);
        return 0;
    }
    const std::string node = getenv_str("SLURMD_NODENAME");
    if (!plain_node_name(node)) {
        slurm_error("%s: job %u: SLURMD_NODENAME is not usable; not tracing", kPlugin, job_id);
        return 0;
    }
    const double interval = request.interval.value_or(config.interval);
    std::vector<std::string> argv = {
        config.sampler,
        "--job", std::to_string(job_id),
        "--node", node,
        "--gpus", gpus,
        "--interval", fmt::format("{}", interval),
        "--spool", config.spool,
        "--nvml", config.nvml,
        "--uid", std::to_string(uid),
        "--gid", std::to_string(gid),
        "--watch-interval", fmt::format("{}", config.watch_interval),
        "--call-timeout", fmt::format("{}", config.call_timeout),
    };
    // The stall keys also carry stall_mail, which the held-but-idle alert mails through.
    if (config.stall.enabled || config.idle.on())
        for (const auto& word : stall_words(config.stall)) argv.insert(argv.end(), {"--stall", word});
    if (config.idle.on())
        for (const auto& word : idle_words(config.idle)) argv.insert(argv.end(), {"--idle", word});
    if (config.stall.enabled) {
        // Stall detection: what the sampler needs to judge and act.
        argv.insert(argv.end(), {"--restart", std::to_string(acme::util::parse_int(getenv_str("SLURM_JOB_RESTART_COUNT")).value_or(0))});
        if (acme::faultguard::job_asked_auto_recover()) argv.push_back("--auto-recover");
        if (const auto ckpt = acme::faultguard::job_ckpt_dir(); !ckpt.empty()) argv.insert(argv.end(), {"--ckpt-dir", ckpt});
    }
    if (!config.textfile_dir.empty())
        argv.insert(argv.end(), {"--textfile-dir", expand_textfile_dir(config.textfile_dir, node)});
    if (!config.textfile_dir.empty() && config.textfile_job_labels) argv.push_back("--textfile-job-labels");
    // Slurm 26.05+: the id Slurm never hands out again, so the spool tells this job from an
    // older one that had its id.
    if (const auto sluid = getenv_str("SLURM_JOB_SLUID"); !sluid.empty()) argv.insert(argv.end(), {"--sluid", sluid});
    // Only what the sampler needs: libslurm finds slurmctld through SLURM_CONF, and nothing of
    // the job's (user-influenced) environment reaches a root process.
    std::vector<std::string> env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "SLURMD_NODENAME=" + node};
    if (const auto conf = getenv_str("SLURM_CONF"); !conf.empty()) env.push_back("SLURM_CONF=" + conf);
    std::string error;
    // Started in the background (spawn.hpp): the sampler's start (its libraries, the spool, NVML)
    // must not compete with the job's own (slurmd's Prolog script and extern step, which srun
    // waits for); it returns to normal priority once it is up (sampler_main.cpp). start_wait:
    // the detached child first claims the pid file and waits for the job's first step, and only
    // then execs the sampler (sampler_wait_c.h), so not even its dynamic linking runs meanwhile.
    const std::string run_dir = sampler_run_dir(config.spool);
    const std::string pidfile = sampler_pidfile(config.spool, node, job_id);
    const SamplerWait wait{config.spool.c_str(), run_dir.c_str(), pidfile.c_str(), job_id, config.start_wait};
    if (!acme::util::spawn_detached(argv, env, sampler_logfile(config.spool, node), error,
                                    acme::util::Priority::background, config.start_wait > 0 ? wait_before_exec : nullptr,
                                    &wait)) {
        slurm_error("%s: job %u: cannot start the sampler: %s", kPlugin, job_id, error.c_str());
        return 0;
    }
    slurm_info("%s: job %u: sampling GPUs %s every %g s (prolog %.0f ms)", kPlugin, job_id, gpus.c_str(), interval,
               acme::spank::ms_since(t0));
    return 0;
}

int job_script_epilog(spank_t sp, int ac, char** av) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto [config, errors] = load_config(ac, av);
    for (const auto& e : errors) slurm_error("%s", e.c_str());
    uint32_t job_id = 0;
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) return 0;
    const std::string node = getenv_str("SLURMD_NODENAME");
    if (!plain_node_name(node)) return 0;
    const auto pidfile = sampler_pidfile(config.spool, node, job_id);
    if (access(pidfile.c_str(), F_OK) == 0) {
        const auto stopped = stop_sampler(pidfile, job_id, config.stop_timeout);
        if (stopped == StopResult::killed)
            slurm_error("%s: job %u: the sampler did not finish within %g s and was killed; its last samples are lost",
                        kPlugin, job_id, config.stop_timeout);
        else if (stopped == StopResult::stopped)
            slurm_info("%s: job %u: sampler stopped (epilog %.0f ms)", kPlugin, job_id, acme::spank::ms_since(t0));
    }
    // A sampler that crashed (or was just killed) left its series behind; node_exporter would
    // export the ended job's last values forever. The sampler removes its own file when it stops,
    // so normally there is nothing here.
    if (!config.textfile_dir.empty() && remove_textfile(expand_textfile_dir(config.textfile_dir, node), job_id))
        slurm_info("%s: job %u: removed the Prometheus textfile a stopped sampler left", kPlugin, job_id);
    // After the sampler, its last reader: the job's heartbeat directory goes with the job.
    if (config.stall.enabled) remove_heartbeat_dir(config.stall.heartbeat_dir, job_id);
    return 0;
}

}  // namespace acme::telemetry::plugin
