// acme-health-gate: faultguard's pre-job check, run from the job prolog (bounded by the plugin).
// Through NVML: the node shows the GPUs slurmctld says it has; none of the job's GPUs has an
// uncorrected ECC error, a pending row remap or retired page, or a failed row remap; no fatal
// XID was recorded on the node since its last check. A failing node is drained with the reason
// and the job is requeued, so it runs elsewhere. Exit 0: passed (or cannot tell: never drain on
// a guess); 1: failed and acted on.
// With --serve it stays resident instead and answers each job's prolog over the node's socket
// (spank/faultguard/core/resident_gate.hpp): the prolog then starts no process per job.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "common/nvml/library.hpp"
#include "common/slurm/actions.hpp"
#include "common/slurm/jobs.hpp"
#include "common/store/spool.hpp"
#include "common/util/cli_checks.hpp"
#include "common/util/version.hpp"
#include "common/util/wall_clock.hpp"
#include "spank/faultguard/core/faultguard_paths.hpp"
#include "spank/faultguard/core/health_check.hpp"
#include "spank/faultguard/core/recovery_release.hpp"
#include "spank/faultguard/core/resident_gate.hpp"
#include "spank/faultguard/core/spool_records.hpp"

using namespace acme;
using util::wall_now;

int main(int argc, char** argv) {
    std::string node, gpus, spool, nvml_path, rules_dir;
    long long job = 0, release = 0, restart = 0;
    bool serve = false;
    double idle = 300;
    CLI::App app{"acme-health-gate: pre-job GPU health check (run by faultguard.so's job prolog)"};
    app.set_version_flag("--version", acme::version_line("acme-health-gate"), "print the version and exit");
    app.add_option("--node", node);
    app.add_option("--job", job)->check(acme::util::positive_integer());
    app.add_option("--gpus", gpus, "the job's GPU ids on this node");
    app.add_option("--spool", spool);
    app.add_option("--nvml", nvml_path);
    app.add_option("--rules", rules_dir, "the diagnosis rules directory: its [[xid]] table says which XIDs drain");
    app.add_flag("--serve", serve, "stay resident and answer each job's prolog on the node's socket (faultguard(8))");
    app.add_option("--idle", idle, "with --serve: end after this many seconds without a job")
        ->check(CLI::Range(0.1, 86400.0));
    app.add_option("--release", release, "internal: wait for this job's requeue, then make it eligible now");
    app.add_option("--restart", restart, "internal: the restart count before the requeue");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    if (release > 0) return recovery::release_after_requeue(static_cast<unsigned>(release), restart);
    if (serve) {
        if (node.empty() || spool.empty() || nvml_path.empty()) {
            fmt::print(stderr, "acme-health-gate --serve: --node, --spool and --nvml are required\n");
            return 2;
        }
        return faultguard::serve_resident_gate({node, spool, nvml_path, rules_dir, idle});
    }
    if (job <= 0 || node.empty() || spool.empty() || nvml_path.empty()) {
        fmt::print(stderr, "acme-health-gate: --node, --job, --gpus, --spool and --nvml are required\n");
        return 2;
    }
    faultguard::GatePhases phases;
    try {
        auto db = store::open_spool(store::spool_path(spool, node));
        phases.done("spool");
        std::string error;
        auto nvml = nvml::Library::open(nvml_path, error);
        if (!nvml) {
            faultguard::record_health_check(db, node, wall_now(), job, true, "cannot check: " + error);
            fmt::print("health gate on {}: cannot check ({}); letting job {} run\n", node, error, job);
            return 0;
        }
        const auto problems = faultguard::health_problems(db, *nvml, {node, spool, gpus, rules_dir}, phases);
        if (problems.empty()) {
            faultguard::record_health_check(db, node, wall_now(), job, true, "ok");
            phases.done("record");
            fmt::print("health gate on {}: ok for job {}{}\n", node, job, phases.line());
            return 0;
        }
        std::string detail;
        for (const auto& p : problems) detail += (detail.empty() ? "" : "; ") + p;
        const std::string reason = "acme: health gate: " + detail.substr(0, 200);
        std::string outcome = fmt::format("failed ({})", detail);
        // The verdict is stored before acting on it: a gate killed midway (the job cancelled
        // while it drains and requeues) still leaves the check, so the XIDs it saw are not
        // counted again against the node once an admin resumes it.
        const auto row = faultguard::record_health_check(db, node, wall_now(), job, false, outcome + "; acting");
        if (const auto err = slurm::drain_node(node, reason); !err.empty()) outcome += "; drain failed: " + err;
        else outcome += "; node drained";
        const auto before = slurm::load_job(static_cast<unsigned>(job));
        if (const auto err = slurm::requeue_job(static_cast<unsigned>(job)); !err.empty()) {
            outcome += "; requeue failed: " + err;
        } else {
            outcome += fmt::format("; job {} requeued to run elsewhere", job);
            recovery::start_release_watcher(static_cast<unsigned>(job), before ? before->restart_count : 0,
                                            faultguard::log_path(spool, node));
        }
        faultguard::amend_health_check(db, row, outcome);
        fmt::print("health gate on {}: {}\n", node, outcome);
        return 1;
    } catch (const std::exception& e) {
        fmt::print("health gate on {}: error: {}; letting job {} run\n", node, e.what(), job);
        return 0;
    }
}
