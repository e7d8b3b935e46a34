#include "spank/faultguard/core/health_check.hpp"

#include <sys/stat.h>

#include <fmt/format.h>

#include "common/nvml/device_selection.hpp"
#include "common/recovery/recovery_policy.hpp"
#include "common/slurm/actions.hpp"
#include "common/store/spool_gpu.hpp"
#include "common/util/parse.hpp"
#include "common/util/wall_clock.hpp"
#include "spank/faultguard/core/faultguard_paths.hpp"
#include "spank/faultguard/core/promised_gpus.hpp"

namespace acme::faultguard {

namespace {

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

}  // namespace

void GatePhases::done(const char* name) {
    const auto now = std::chrono::steady_clock::now();
    text_ += fmt::format("{}{} {:.0f} ms", text_.empty() ? "" : ", ", name,
                         std::chrono::duration<double, std::milli>(now - last_).count());
    last_ = now;
}

std::vector<std::string> health_problems(store::Database& db, const nvml::Library& nvml, const GateInputs& in,
                                         GatePhases& phases) {
    std::vector<std::string> problems;
    std::string error;
    const auto devices = nvml.devices(error);
    phases.done("nvml");
    const int shown = static_cast<int>(devices.size());
    const auto kept_path = promised_gpus_path(in.spool, in.node);
    const auto kept = read_promised_gpus(kept_path);
    if (must_ask_slurmctld(kept, shown, util::wall_now())) {
        const auto promised = slurm::node_gpu_count(in.node);
        if (promised && shown < *promised)
            problems.push_back(fmt::format("NVML shows {} GPUs, Slurm promises {}", shown, *promised));
        mkdir(run_dir(in.spool).c_str(), 0700);
        if (promised) write_promised_gpus(kept_path, {*promised, util::wall_now()});
        phases.done("slurmctld");
    } else {
        phases.done("kept");  // slurmctld not asked: the kept count (promised_gpus.hpp)
    }
    const auto ids = util::parse_id_list(in.gpus).value_or(std::vector<int>{});
    const auto selection = nvml::select_devices(devices, ids);
    for (int missing : selection.missing) problems.push_back(fmt::format("GPU {} not found by NVML", missing));
    for (const auto& d : selection.devices) {
        const auto r = nvml.read(d.handle);
        if (r.lost) problems.push_back(fmt::format("GPU {} is lost", d.minor));
        if (r.remap_failure.value_or(0)) problems.push_back(fmt::format("GPU {} row-remap failure", d.minor));
        if (r.remap_pending.value_or(0)) problems.push_back(fmt::format("GPU {} row remap pending", d.minor));
        if (r.retired_pending.value_or(0)) problems.push_back(fmt::format("GPU {} page retirement pending", d.minor));
        if (r.ecc_uncorrected.value_or(0) > 0)
            problems.push_back(fmt::format("GPU {} {} uncorrected ECC errors", d.minor, *r.ecc_uncorrected));
    }
    phases.done("reads");
    for (auto& x : recent_fatal_xids(db, in.rules_dir)) problems.push_back(std::move(x));
    phases.done("xids");
    return problems;
}

}  // namespace acme::faultguard
