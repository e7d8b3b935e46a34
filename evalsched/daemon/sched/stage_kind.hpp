// Precursor stage jobs as one kind of job in the lifecycle (lifecycle.hpp): per (evaluation,
// node), a CPU-only Slurm job pinned to the node (-w, no GPUs, a --time from the staging
// prior) that runs evalsched_stage as the evaluation's user into the node-local cache and
// records stage.json, before the GPU trials placed there start (they depend on it: afterok).
// So a trial never holds GPUs while a checkpoint is copied. Judged from Slurm's view and its
// stage.json; a failure is retried once (stage_jobs.hpp), then the node's trials stage
// themselves as before.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/slurm/cluster.hpp"
#include "common/store/database.hpp"
#include "evalsched/daemon/config.hpp"
#include "evalsched/store/rows.hpp"
#include "evalsched/store/stage_jobs.hpp"

namespace acme::evalsched {

class StageKind {
public:
    using Row = StageRow;
    StageKind(const DaemonConfig& config, store::Database& db) : config_(config), db_(db) {}

    // Submits stage job number `number` of `e` on `node` with --time from `stage_s` (the
    // staging prior); its job id, or nullopt when it could not be submitted.
    std::optional<std::int64_t> start(const EvalInfo& e, const std::string& node, int number, double stage_s);

    // The JobKind interface (lifecycle.hpp).
    std::vector<StageRow> open();
    std::string describe(const StageRow& s);
    std::optional<std::uint32_t> owner(const StageRow& s);
    void adopted(const StageRow& s, std::int64_t job_id);
    void lost(const StageRow& s);
    void refused(const StageRow& s, const std::string& error);
    void submitted(const StageRow& s, std::int64_t job_id);
    void running(const StageRow& s, const std::string& nodes);
    void finish(const StageRow& s, const slurm::JobView* job);
    std::vector<StageRow> to_kill();
    void killed(const StageRow& s);

private:
    const DaemonConfig& config_;
    store::Database& db_;
};

// A stage job's --time in seconds: twice the prior's copy time plus a minute for the job's own
// start, at least two minutes (Slurm's limits are whole minutes).
double stage_time_limit_s(double stage_s);

}  // namespace acme::evalsched
