// gputrace_impl.so in job_script context (a fresh `slurmstepd spank epilog` process per call,
// root, once per node): every epilog stops the job's sampler, if any, waits a bounded time for
// its last flush, and removes what is left. The prolog is the shim's alone (shim.c: the job's
// heartbeat directory, and a traced job's sampler started through sampler_spawn_c.h).
#include <unistd.h>

#include <chrono>
#include <string>

#include <fmt/format.h>

#include "spank/gputrace/core/heartbeat_dir.hpp"
#include "spank/gputrace/core/sampler_control.hpp"
#include "spank/gputrace/core/sampler_paths.hpp"
#include "spank/gputrace/core/textfile_writer.hpp"
#include "spank/gputrace/plugin.hpp"

namespace acme::telemetry::plugin {

using acme::spank::getenv_str;
using acme::spank::plain_node_name;

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
