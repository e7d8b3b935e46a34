// The pre-job checks themselves, shared by the gate process (acme-health-gate, which acts on a
// failure) and the resident gate (--serve, which only ever passes a node or sends the prolog to
// the gate process): both judge a node by the same code.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/nvml/library.hpp"
#include "common/store/spool.hpp"

namespace acme::faultguard {

// Where the gate's time goes, for its output line: the bench (tests/bench/telemetry) prints
// each phase's median, since every GPU job waits for the gate in its prolog.
class GatePhases {
public:
    void done(const char* name);
    std::string line() const { return text_.empty() ? "" : " (" + text_ + ")"; }

private:
    std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
    std::string text_;
};

struct GateInputs {
    std::string node, spool, gpus, rules_dir;
};

// What is wrong with the node for a job on `gpus`, one line each; empty: it passes. Through
// NVML: the node shows the GPUs slurmctld says it has (the count slurmctld gave is kept a while:
// promised_gpus.hpp); none of the job's GPUs is lost or has an uncorrected ECC error, a pending
// row remap or retired page, or a failed row remap; no fatal XID was recorded on the node since
// its last check.
std::vector<std::string> health_problems(store::Database& db, const nvml::Library& nvml, const GateInputs& in,
                                         GatePhases& phases);

}  // namespace acme::faultguard
