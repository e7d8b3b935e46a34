// A dataset's CPU metric job as one kind of job in the lifecycle (lifecycle.hpp): submitted
// once every trial holding a piece of the dataset is queued (core/decisions.hpp decides when),
// chained to their jobs (afterany), and judged from Slurm's view and the script's output
// check: scores from the dataset's result.json, a wait for a trial's retry, or a failure the
// retry rule decides on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/diagnose/engine.hpp"
#include "common/slurm/cluster.hpp"
#include "common/store/database.hpp"
#include "evalsched/daemon/config.hpp"
#include "evalsched/daemon/metric_jobs.hpp"
#include "evalsched/store/rows.hpp"

namespace acme::evalsched {

class MetricKind {
public:
    using Row = MetricRow;
    // `engine` may be null (no diagnosis rules loaded).
    MetricKind(const DaemonConfig& config, store::Database& db, const diagnose::Engine* engine)
        : config_(config), db_(db), engine_(engine) {}

    // Submits the waiting metric job chained after the Slurm jobs `after`; false when refused.
    bool start(const MetricRow& waiting, const EvalInfo& e, const std::vector<std::int64_t>& after);

    // The JobKind interface (lifecycle.hpp). A row's after_jobs is what its submission was
    // chained to, recorded with its job id.
    std::vector<MetricRow> open();
    std::string describe(const MetricRow& m);
    std::optional<std::uint32_t> owner(const MetricRow& m);
    void adopted(const MetricRow& m, std::int64_t job_id);
    void lost(const MetricRow& m);
    void refused(const MetricRow& m, const std::string& error);
    void submitted(const MetricRow& m, std::int64_t job_id);
    void running(const MetricRow& m, const std::string& nodes);
    void finish(const MetricRow& m, const slurm::JobView* job);
    std::vector<MetricRow> to_kill();
    void killed(const MetricRow& m);

private:
    MetricOutcome judge(const MetricRow& m, const EvalInfo& e, const slurm::JobView* job);

    const DaemonConfig& config_;
    store::Database& db_;
    const diagnose::Engine* engine_;
};

}  // namespace acme::evalsched
