// acme-health-gate: faultguard's pre-job check, run from the job prolog (bounded by the plugin).
// Through NVML: the node shows the GPUs slurmctld says it has; none of the job's GPUs has an
// uncorrected ECC error, a pending row remap or retired page, or a failed row remap; no fatal
// XID was recorded on the node since its last check. A failing node is drained with the reason
// and the job is requeued, so it runs elsewhere. Exit 0: passed (or cannot tell: never drain on
// a guess); 1: failed and acted on.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "spank/faultguard/core/faultguard_paths.hpp"
#include "spank/faultguard/core/promised_gpus.hpp"
#include "spank/faultguard/core/spool_records.hpp"
#include "common/nvml/library.hpp"
#include "common/recovery/recovery_policy.hpp"
#include "spank/faultguard/core/recovery_release.hpp"
#include "common/slurm/jobs.hpp"
#include "common/slurm/actions.hpp"
#include "common/store/spool.hpp"
#include "common/store/spool_gpu.hpp"
#include "common/nvml/device_selection.hpp"
#include "common/util/parse.hpp"
#include "common/util/version.hpp"
#include "common/util/cli_checks.hpp"
#include "common/util/wall_clock.hpp"

namespace {

using namespace acme;

using util::wall_now;

// Fatal XIDs recorded on this node since its previous check (a drained node an admin resumed
// is not failed again for the same old XID). The rules that say which XIDs drain are parsed only
// when there is an XID to judge: every GPU job's prolog waits for the gate, and most nodes have
// none.
std::vector<std::string> recent_fatal_xids(store::Database& db, const std::string& rules_dir) {
    std::vector<std::string> out;
    const auto events = store::xids_since_last_health_check(db);
    if (events.empty()) return out;
    const auto xids = rules_dir.empty() ? recovery::builtin_xid_actions() : recovery::load_xid_actions(rules_dir);
    for (const auto& e : events)
        if (e.code && xids.drains(*e.code)) out.push_back(fmt::format("XID {} on GPU {}", e.code.value_or(0), e.gpu));
    return out;
}

// Where the gate's time goes, for its output line: the bench (tests/bench/telemetry) prints
// each phase's median, since every GPU job waits for the gate in its prolog.
class Phases {
public:
    void done(const char* name) {
        const auto now = std::chrono::steady_clock::now();
        text_ += fmt::format("{}{} {:.0f} ms", text_.empty() ? "" : ", ", name,
                             std::chrono::duration<double, std::milli>(now - last_).count());
        last_ = now;
    }
    std::string line() const { return text_.empty() ? "" : " (" + text_ + ")"; }

private:
    std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
    std::string text_;
};

}  // namespace

int main(int argc, char** argv) {
    std::string node, gpus, spool, nvml_path, rules_dir;
    long long job = 0, release = 0, restart = 0;
    CLI::App app{"acme-health-gate: pre-job GPU health check (run by faultguard.so's job prolog)"};
    app.set_version_flag("--version", acme::version_line("acme-health-gate"), "print the version and exit");
    app.add_option("--node", node);
    app.add_option("--job", job)->check(acme::util::positive_integer());
    app.add_option("--gpus", gpus, "the job's GPU ids on this node");
    app.add_option("--spool", spool);
    app.add_option("--nvml", nvml_path);
    app.add_option("--rules", rules_dir, "the diagnosis rules directory: its [[xid]] table says which XIDs drain");
    app.add_option("--release", release, "internal: wait for this job's requeue, then make it eligible now");
    app.add_option("--restart", restart, "internal: the restart count before the requeue");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    if (release > 0) return recovery::release_after_requeue(static_cast<unsigned>(release), restart);
    if (job <= 0 || node.empty() || spool.empty() || nvml_path.empty()) {
        fmt::print(stderr, "acme-health-gate: --node, --job, --gpus, --spool and --nvml are required\n");
        return 2;
    }
    Phases phases;
    try {
        auto db = store::open_spool(store::spool_path(spool, node));
        phases.done("spool");
        std::vector<std::string> problems;

        std::string error;
        auto nvml = nvml::Library::open(nvml_path, error);
        if (!nvml) {
            faultguard::record_health_check(db, node, wall_now(), job, true, "cannot check: " + error);
            fmt::print("health gate on {}: cannot check ({}); letting job {} run\n", node, error, job);
            return 0;
        }
        const auto devices = nvml->devices(error);
        phases.done("nvml");
        const int shown = static_cast<int>(devices.size());
        const auto kept_path = faultguard::promised_gpus_path(spool, node);
        const auto kept = faultguard::read_promised_gpus(kept_path);
        if (faultguard::must_ask_slurmctld(kept, shown, wall_now())) {
            const auto promised = slurm::node_gpu_count(node);
            if (promised && shown < *promised)
                problems.push_back(fmt::format("NVML shows {} GPUs, Slurm promises {}", shown, *promised));
            mkdir(faultguard::run_dir(spool).c_str(), 0700);
            if (promised) faultguard::write_promised_gpus(kept_path, {*promised, wall_now()});
            phases.done("slurmctld");
        } else {
            phases.done("kept");  // slurmctld not asked: the kept count (promised_gpus.hpp)
        }
        const auto ids = util::parse_id_list(gpus).value_or(std::vector<int>{});
        const auto selection = nvml::select_devices(devices, ids);
        for (int missing : selection.missing) problems.push_back(fmt::format("GPU {} not found by NVML", missing));
        for (const auto& d : selection.devices) {
            const auto r = nvml->read(d.handle);
            if (r.lost) problems.push_back(fmt::format("GPU {} is lost", d.minor));
            if (r.remap_failure.value_or(0)) problems.push_back(fmt::format("GPU {} row-remap failure", d.minor));
            if (r.remap_pending.value_or(0)) problems.push_back(fmt::format("GPU {} row remap pending", d.minor));
            if (r.retired_pending.value_or(0)) problems.push_back(fmt::format("GPU {} page retirement pending", d.minor));
            if (r.ecc_uncorrected.value_or(0) > 0)
                problems.push_back(fmt::format("GPU {} {} uncorrected ECC errors", d.minor, *r.ecc_uncorrected));
        }
        phases.done("reads");
        for (auto& x : recent_fatal_xids(db, rules_dir)) problems.push_back(std::move(x));
        phases.done("xids");

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
