// One node's part of the acme job record (common/record/record.hpp): what this node's epilog
// knows of the run — its GPUs' summaries and events, the diagnosis, what recovery did, the
// health gate's verdict. Never raw log text: evidence lines only, cut short.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/diagnose/engine.hpp"
#include "common/store/spool_failures.hpp"
#include "common/store/spool_gpu.hpp"
#include "common/store/spool_stalls.hpp"

namespace acme::faultguard {

struct RecoveryDone {
    bool drained = false, requeued = false;
    std::string drain_reason, outcome;
};

struct NodePartInputs {
    std::vector<store::GpuSummary> gpus;
    std::vector<store::GpuEventRow> events;
    std::optional<diagnose::Diagnosis> diagnosis;  // nullopt: the run did not fail
    std::optional<RecoveryDone> recovery;          // nullopt: --auto-recover not asked
    std::optional<store::HealthCheckRow> gate;
    std::optional<store::StallRow> stall;     // the sampler's stall verdict for this run
    std::optional<std::string> resumed_from;  // --ckpt-dir jobs: ACME_RESUME_CKPT of this run ("" fresh)
    std::optional<double> resumed_ckpt_ts;    // when that checkpoint was complete (its mtime)
    double epilog_ts = 0;
};

inline constexpr std::size_t kRecordEvents = 8;        // events kept per node, oldest first
inline constexpr std::size_t kRecordEvidence = 3;      // evidence lines kept
inline constexpr std::size_t kRecordTextChars = 200;   // per evidence line, outcome, detail

nlohmann::json node_part(const NodePartInputs& in);

// The resume hand-off line, "PATH" or "PATH\tMTIME" (faultguard_paths.hpp, resume_path), into
// resumed_from and resumed_ckpt_ts.
void take_resume_line(std::string line, NodePartInputs& in);

}  // namespace acme::faultguard
